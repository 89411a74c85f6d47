/**
 * The ISO 4217 codes TikTok's Events API 2.0 parameter reference lists for `properties.currency`. A value in any
 * other currency is left out of the event (map.ts) rather than risk TikTok refusing the event.
 */
const TIKTOK_CURRENCIES: ReadonlySet<string> = new Set([
  'AED', 'ARS', 'AUD', 'BDT', 'BHD', 'BIF', 'BOB', 'BRL', 'CAD', 'CHF', 'CLP', 'CNY', 'COP', 'CRC', 'CZK', 'DKK',
  'DZD', 'EGP', 'EUR', 'GBP', 'GTQ', 'HKD', 'HNL', 'HUF', 'IDR', 'ILS', 'INR', 'ISK', 'JPY', 'KES', 'KHR', 'KRW',
  'KWD', 'KZT', 'MAD', 'MOP', 'MXN', 'MYR', 'NGN', 'NIO', 'NOK', 'NZD', 'OMR', 'PEN', 'PHP', 'PKR', 'PLN', 'PYG',
  'QAR', 'RON', 'RUB', 'SAR', 'SEK', 'SGD', 'THB', 'TRY', 'TWD', 'UAH', 'USD', 'VES', 'VND', 'ZAR',
])

export function isTikTokCurrency(code: string): boolean {
  return TIKTOK_CURRENCIES.has(code)
}
