/**
 * Who must be asked for consent before tracking, by the country of the IP address. The rule is the law of the
 * visitor's location (GDPR Art. 3(2), ePrivacy Art. 5(3) as transposed), so the set is:
 * - the 27 EU member states, and their outermost regions that have their own ISO codes (GF, GP, MQ, RE, YT, MF)
 *   plus Åland (AX), which geo databases often report separately;
 * - the rest of the EEA (IS, LI, NO), where the GDPR applies through the EEA agreement;
 * - the United Kingdom (UK GDPR + PECR) and the Crown dependencies and Gibraltar with their own GDPR copies
 *   (GG, JE, IM, GI);
 * - Switzerland (revised FADP; its cookie rule is lighter than ePrivacy, but sites serving CH and EU visitors
 *   treat them alike and a banner there costs little).
 * An unknown country (no IP, private address, not in the database) requires consent: the safe side.
 */
const EU = ['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE', 'IT', 'LT', 'LU',
  'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK'] as const
const EU_REGIONS = ['GF', 'GP', 'MQ', 'RE', 'YT', 'MF', 'AX'] as const
const EEA = ['IS', 'LI', 'NO'] as const
const UK = ['GB', 'GG', 'JE', 'IM', 'GI'] as const
const OTHER = ['CH'] as const

/**
 * Codes that answer true without being one of the countries above: 'EL' (the EU's code for Greece), 'UK' (a common
 * spelling of GB), and codes that say nothing about where the visitor is, so count as unknown: 'EU', 'AP' (region-wide allocations), 'XX', 'ZZ' (unknown), 'A1', 'A2', 'O1', 'T1' (anonymous proxy,
 * satellite, other, Tor in some databases) say nothing about where the visitor is, so they count as unknown.
 */
const PLACEHOLDERS: ReadonlySet<string> = new Set(['EL', 'UK', 'EU', 'AP', 'XX', 'ZZ', 'A1', 'A2', 'O1', 'T1'])

export const CONSENT_COUNTRIES: ReadonlySet<string> = new Set<string>([...EU, ...EU_REGIONS, ...EEA, ...UK, ...OTHER])

export function requiresConsent(country?: string): boolean {
  if (!country) return true
  const code = country.trim().toUpperCase()
  if (!/^[A-Z]{2}$/.test(code) || PLACEHOLDERS.has(code)) return true
  return CONSENT_COUNTRIES.has(code)
}
