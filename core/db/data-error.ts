/**
 * The SQLSTATEs that are about the rows themselves, so that writing them again can never succeed: class 21 (one
 * statement updating a row twice, as two copies of one hit would), 22 (data exception: a NUL or an unpaired
 * surrogate in JSON text, a value too long for its column, a number out of range), 23 (a constraint), and 54000 (a
 * value too large for an index). Anything else (a connection lost, a timeout, the server shutting down) is about
 * the database, and the write is retried as it stands (capture's flush) or fails as a whole.
 */
export function dataErrorCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && /^(?:2[123][0-9A-Z]{3}|54000)$/.test(code)) return code
  }
  return undefined
}
