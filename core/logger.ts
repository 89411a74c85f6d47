import { createConsola, type ConsolaInstance, type ConsolaReporter } from 'consola'
import { toLoggable, withoutStatement } from './db/loggable-error.ts'

const LEVELS = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 } as const

/** The root logger; DCGATE_LOG_LEVEL picks silent | error | warn | info (default) | debug | trace. */
export function createLogger(level = process.env.DCGATE_LOG_LEVEL): ConsolaInstance {
  const resolved = level && level in LEVELS ? LEVELS[level as keyof typeof LEVELS] : LEVELS.info
  return withoutPersonalData(createConsola({ level: resolved }).withTag('dcgate'))
}

export function isDebug(logger: ConsolaInstance): boolean {
  return logger.level >= LEVELS.debug
}

/**
 * A logger whose every line passes through toLoggable first: database errors lose their statement, parameters and
 * detail (see core/db/loggable-error.ts), whichever plugin logs them and however (`logger.error('…', error)`, or the
 * message inlined in a string). Tagged children (`withTag`) inherit it. The given logger is left as it was.
 */
export function withoutPersonalData(logger: ConsolaInstance): ConsolaInstance {
  if (REDACTING.has(logger)) return logger
  const reporters = logger.options.reporters.map((reporter): ConsolaReporter => ({
    log: (logObj, context) => reporter.log({ ...logObj, args: logObj.args.map(safeArg) }, context),
  }))
  const redacting = logger.create({ reporters })
  REDACTING.add(redacting)
  return redacting
}

const REDACTING = new WeakSet<ConsolaInstance>()

function safeArg(arg: unknown): unknown {
  return typeof arg === 'string' ? withoutStatement(arg) : toLoggable(arg)
}
