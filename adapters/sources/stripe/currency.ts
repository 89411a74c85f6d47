/**
 * Stripe amounts are integers in the currency's minor unit (https://docs.stripe.com/currencies#minor-units).
 * Most currencies have two decimals; these are the exceptions Stripe lists. ISK, HUF and TWD stay two-decimal in
 * the API even where Stripe only charges whole units, so they are not here.
 */
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'])
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND'])

export function minorUnitDigits(currency: string): number {
  if (ZERO_DECIMAL.has(currency)) return 0
  if (THREE_DECIMAL.has(currency)) return 3
  return 2
}

/** 1999 USD → 19.99; 1999 JPY → 1999; 12340 KWD → 12.34. Division is exact to the nearest double of the decimal. */
export function fromMinorUnits(amount: number, currency: string): number {
  return amount / 10 ** minorUnitDigits(currency)
}
