import { createConsola, type ConsolaInstance } from 'consola'

const LEVELS = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 } as const

/** The root logger; DCGATE_LOG_LEVEL picks silent | error | warn | info (default) | debug | trace. */
export function createLogger(level = process.env.DCGATE_LOG_LEVEL): ConsolaInstance {
  const resolved = level && level in LEVELS ? LEVELS[level as keyof typeof LEVELS] : LEVELS.info
  return createConsola({ level: resolved }).withTag('dcgate')
}

export function isDebug(logger: ConsolaInstance): boolean {
  return logger.level >= LEVELS.debug
}
