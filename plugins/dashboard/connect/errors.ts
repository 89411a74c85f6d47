/** Errors the Connect flow shows the owner as they are: the vendor's own words, bounded to one line. */

/** The vendor refused or failed (an OAuth error, an API error, no answer in time). */
export class VendorError extends Error {
  override name = 'VendorError'
  readonly code: string | undefined
  constructor(message: string, code?: string) {
    super(message)
    this.code = code
  }
}

/** The owner's picks do not fit (a conversion action of another customer, nothing picked). */
export class PickProblem extends Error {
  override name = 'PickProblem'
}

/** One line, at most 300 characters: a vendor's description may span lines or carry a trace. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300)
}
