// The one export of facebook-nodejs-business-sdk the normalisation vectors use as an oracle; the package ships no types.
declare module 'facebook-nodejs-business-sdk' {
  export const ServerSideUtils: {
    /** Meta's own normalise-then-SHA-256 for a Conversions API user_data key (em, ph, fn, ln, ct, st, zp, country). */
    normalizeAndHash(input: string, field: string): string | null
  }
}
