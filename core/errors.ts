/** Raised at boot for anything the operator must fix; printed without a stack trace. */
export class BootError extends Error {
  override name = 'BootError'
  readonly details: string[]
  constructor(message: string, details: string[] = [], options?: ErrorOptions) {
    super(message, options)
    this.details = details
  }

  /** The message and its details, as printed to the operator. */
  describe(): string {
    return [this.message, ...this.details.map((line) => `  - ${line}`)].join('\n')
  }
}
