/** A failure the CLI reports in one line on stderr, exiting non-zero, without a stack trace. */
export class CliError extends Error {
  override name = 'CliError'
  readonly exitCode: number
  constructor(message: string, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}

export interface Output {
  json: boolean
  /** Prints `data` as JSON with --json, else the human text. */
  result: (data: unknown, human: () => string) => void
}

export function createOutput(json: boolean): Output {
  return {
    json,
    result(data, human) {
      process.stdout.write(`${json ? JSON.stringify(data, null, 2) : human()}\n`)
    },
  }
}

/** Left-aligned columns for list output. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? []
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()).join('\n')
}
