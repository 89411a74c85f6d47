import type { RunPrepared, PreparedStatement } from '../db/prepared.ts'
import type { Registry } from '../registry.ts'
import type { ActiveSite } from '../sites/directory.ts'
import { normalizeEmail } from '../identity/normalize.ts'
import { sha256Hex } from '../identity/hash.ts'

/**
 * $1 site, $2 event key, $3 normalised email, $4 expiry in days, $5 the site's platforms, $6 the email's SHA-256
 * (an integrator that sent the email already hashed). Claims every matching held
 * row oldest first (skip locked: a concurrent identical release takes none of them), marks it released as
 * `crm_qualified`, and writes its outbox rows; the delivery worker sends them like any other delivery. The gates
 * the conversion passed at capture apply again here: a bot or a denied consent is recorded as skipped.
 */
const RELEASE_HELD: PreparedStatement = {
  name: 'dcgate_release_held_v3',
  text: `with claimed as (
      select id from conversions
      where site_id = $1 and event = $2 and state = 'held' and created_at > now() - make_interval(days => $4::int)
        and (held_email = $3 or (held_email is null and identity ->> 'email' = $6))
      order by created_at, id for update skip locked
    ), released as (
      update conversions c set state = 'released', resolved_at = now(), confirmation = 'crm_qualified', held_email = null,
        -- With no platform to send to, IP and browser are no longer needed; otherwise the last delivery clears them.
        ip = case when cardinality($5::text[]) = 0 then null else c.ip end,
        user_agent = case when cardinality($5::text[]) = 0 then null else c.user_agent end
      from claimed where c.id = claimed.id
      returning c.id, c.created_at, c.is_bot, c.consent
    ), d as (
      insert into deliveries (id, conversion_id, site_id, provider, status, error)
      select gen_random_uuid(), r.id, $1, p.provider,
        case when r.is_bot or r.consent = 'denied' then 'skipped' else 'pending' end,
        case when r.is_bot then 'the matched visit was ruled a bot' when r.consent = 'denied' then 'the visitor denied consent' end
      from released r, unnest($5::text[]) as p(provider)
      returning conversion_id
    )
    select r.id, (select count(*) from d where d.conversion_id = r.id)::int as deliveries from released r order by r.created_at, r.id`,
}

export interface ReleaseResult {
  /** Held conversions released by this call, oldest first. */
  released: string[]
  /** Ad platforms the site delivers to (0: released, nothing to send). */
  platforms: number
}

export async function releaseHeld(
  deps: { prepared: RunPrepared, registry: Registry }, site: ActiveSite, eventName: string, email: string, expireAfterDays: number,
): Promise<ReleaseResult> {
  const normalized = normalizeEmail(email)
  const platforms = deps.registry.forSite(site.id, 'ad-platform').map((c) => c.definition.name)
  if (!normalized) return { released: [], platforms: platforms.length }
  const rows = await deps.prepared<{ id: string }>(RELEASE_HELD, [site.id, eventName, normalized, expireAfterDays, platforms, sha256Hex(normalized)])
  return { released: rows.map((r) => r.id), platforms: platforms.length }
}
