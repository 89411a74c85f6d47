import * as v from 'valibot'
import { strictOptions } from '../../core/index.ts'

const Minutes = (min: number, max: number, fallback: number) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max)), fallback)

/** `dashboard` in the config (all optional). */
export const DashboardOptions = strictOptions({
  /** A signed-in session ends this long after sign-in. */
  sessionHours: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(720)), 12),
  /** An emailed sign-in link works this long, once. */
  linkMinutes: Minutes(1, 60, 15),
  /** Sign-in attempts (admin token or email link requests) one IP address may make per 15 minutes. */
  signInsPerIp: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 10),
  /**
   * Sign-in links one email address may be asked for per hour from one requester (IP address, IPv6 per /64): a
   * stranger's requests never use up a member's own.
   */
  linksPerEmail: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 3),
  /** Sign-in links one email address may be asked for per day, from anyone: a bound on mail to one inbox. */
  linksPerEmailPerDay: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 20),
  /**
   * Whether a site's members may edit it (name, domains, members, events, destinations, sources) when it was made in
   * the dashboard. Only the operator makes sites; a config-file site stays read-only for everyone.
   */
  membersMayEdit: v.optional(v.boolean(), false),
})

export type DashboardOptions = v.InferOutput<typeof DashboardOptions>

declare module '../../core/config/schema.ts' {
  interface PluginSections { dashboard?: v.InferInput<typeof DashboardOptions> }
  interface ResolvedPluginSections { dashboard: DashboardOptions }
}
