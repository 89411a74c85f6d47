import * as v from 'valibot'
import { BootError } from '../../core/errors.ts'
import { formatIssues } from '../../core/config/issues.ts'

const Ms = v.pipe(v.number(), v.integer(), v.minValue(50), v.maxValue(30_000))
const Seconds = v.pipe(v.number(), v.integer(), v.minValue(1))

/**
 * `emailRisk` in the config (all optional). The defaults work offline: without a network RDAP and DNS answer
 * "unknown" after `timeoutMs` and the verdict rests on the offline signals.
 */
export const EmailRiskOptionsSchema = v.strictObject({
  /** RDAP base URL; a lookup is GET <rdapUrl>/domain/<registrable domain>. rdap.org redirects to the registry's server. */
  rdapUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL such as https://rdap.org')), 'https://rdap.org'),
  /** DNS servers for MX lookups (ip or ip:port); the system resolver when empty. */
  dnsServers: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  /** Budget of one RDAP or DNS lookup; both run in parallel, so a live check waits at most about this long. */
  timeoutMs: v.optional(Ms, 1500),
  /**
   * Network lookups (RDAP and MX of one domain not cached yet) one site's private email checks may cause per minute;
   * past them a check answers from the offline signals and cached answers, tagged lookup_limit_reached (0: never look up).
   * Identifications from the browser never cause a lookup.
   */
  lookupsPerMinute: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000)), 60),
  /** How long a known domain age or mail-server answer is kept. */
  cacheTtlSeconds: v.optional(Seconds, 7 * 24 * 3600),
  /** How long an "unknown" (timeout, network down) is kept, so a dead endpoint is not asked on every check. */
  unknownTtlSeconds: v.optional(Seconds, 60),
  /**
   * How long a stored answer is kept in this process's memory (0: never): a repeat check then costs no database
   * query. An identification or erasure in this process drops it at once; another instance's, after this long.
   */
  answerCacheSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(300)), 10),
  /**
   * A domain that certainly receives mail, asked when a domain seems not to exist: a resolver that denies it too
   * (a sinkhole, a sandbox without DNS) makes the answer "unknown" rather than "no mail server".
   */
  dnsCanaryDomain: v.optional(v.pipe(v.string(), v.minLength(3)), 'gmail.com'),
})

export type EmailRiskOptionsInput = v.InferInput<typeof EmailRiskOptionsSchema>
export type EmailRiskOptions = v.InferOutput<typeof EmailRiskOptionsSchema>

/** Validates `emailRisk` options (from the config, or given inline); a mistake stops boot with the key's path. */
export function resolveEmailRiskOptions(input: unknown): EmailRiskOptions {
  const result = v.safeParse(EmailRiskOptionsSchema, input ?? {})
  if (result.success) return result.output
  throw new BootError('Invalid emailRisk options', formatIssues(result.issues, 'emailRisk'))
}

declare module '../../core/config/schema.ts' {
  interface PluginSections { emailRisk?: EmailRiskOptionsInput }
  interface ResolvedPluginSections { emailRisk: EmailRiskOptions }
}
