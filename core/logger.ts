import { createConsola, type ConsolaInstance, type ConsolaReporter } from 'consola'
import { toLoggable, withoutStatement } from './db/loggable-error.ts'

const LEVELS = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 } as const

/**
 * The root logger; DCGATE_LOG_LEVEL picks silent | error | warn | info (default) | debug | trace, and LOG_FORMAT=json
 * writes one JSON object a line to stdout (for a log collector) instead of consola's lines for people.
 */
export function createLogger(level = process.env.DCGATE_LOG_LEVEL, format = process.env.LOG_FORMAT): ConsolaInstance {
  const resolved = level && level in LEVELS ? LEVELS[level as keyof typeof LEVELS] : LEVELS.info
  const reporters = isJsonFormat(format) ? [createJsonReporter((line) => process.stdout.write(line))] : undefined
  return withoutPersonalData(createConsola({ level: resolved, ...(reporters ? { reporters } : {}) }).withTag('dcgate'))
}

export function isJsonFormat(format = process.env.LOG_FORMAT): boolean {
  return format?.trim().toLowerCase() === 'json'
}

/** Whether this logger writes JSON lines (requests then get an id, echoed in x-request-id, that its lines carry). */
export function logsJson(logger: ConsolaInstance): boolean {
  return logger.options.reporters.some((reporter) => JSON_REPORTERS.has(reporter))
}

const JSON_REPORTERS = new WeakSet<ConsolaReporter>()

/**
 * One JSON object a line: time, level name, tag, msg (the text arguments), err (name, message and stack of an Error
 * argument) and the log object's own fields (requestId, and the request line's method, route, status, ms).
 */
export function createJsonReporter(write: (line: string) => void): ConsolaReporter {
  const reporter: ConsolaReporter = {
    log: ({ date, type, tag, args, level: _level, ...fields }) => {
      const texts: string[] = []
      let err: { name: string, message: string, stack?: string } | undefined
      for (const arg of args as unknown[]) {
        if (arg instanceof Error) err ??= { name: arg.name, message: arg.message, stack: arg.stack }
        else texts.push(typeof arg === 'string' ? arg : safeJson(arg))
      }
      write(`${JSON.stringify({ time: date.toISOString(), level: type, ...(tag ? { tag } : {}), msg: texts.join(' '), ...(err ? { err } : {}), ...fields })}\n`)
    },
  }
  JSON_REPORTERS.add(reporter)
  return reporter
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  }
  catch {
    return String(value)
  }
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
  const reporters = logger.options.reporters.map((reporter): ConsolaReporter => {
    const redacting: ConsolaReporter = { log: (logObj, context) => reporter.log({ ...logObj, args: logObj.args.map(safeArg) }, context) }
    if (JSON_REPORTERS.has(reporter)) JSON_REPORTERS.add(redacting)
    return redacting
  })
  const redacting = logger.create({ reporters })
  REDACTING.add(redacting)
  return redacting
}

const REDACTING = new WeakSet<ConsolaInstance>()

function safeArg(arg: unknown): unknown {
  return typeof arg === 'string' ? withoutStatement(arg) : toLoggable(arg)
}
