/**
 * The admin API's answer to `POST /admin/api/sites/:id/verify-domain` (the capture plugin checks the host; the CLI's
 * `dcgate sites verify-domain` prints it): declared in core, the wire contract both sides use.
 */
export interface VerifyDomainAnswer {
  site_id: string
  host: string
  verified: boolean
  /** What the record points at now (a CNAME target, or the addresses of a flattened record). */
  target: string | null
  /** Why it is not verified; null when it is. */
  reason: string | null
  /** The check could not reach DNS (a verified host then stays verified for a while). */
  temporary: boolean
  checked_at: string
  verified_at: string | null
  script_host: string
  /** The record to create at the site's DNS provider. */
  record: { name: string, type: 'CNAME', value: string }
}
