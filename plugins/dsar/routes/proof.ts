import type { H3Event } from 'h3'
import * as v from 'valibot'
import { apiError } from '../../../core/http/errors.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import type { RequestRow } from '../queries/requests.ts'
import type { Dsar } from '../service.ts'
import { renderStatusPage, renderUnknownPage } from '../status-page.ts'

const Code = v.object({ code: v.pipe(v.string(), v.maxLength(64)) })

const LogEntry = v.object({ at: v.string(), event: v.string(), detail: v.optional(v.string()), records: v.optional(v.number()) })
const Proof = v.object({
  status: v.picklist(['received', 'processing', 'completed']),
  maskedEmail: v.string(),
  received_at: v.string(),
  completed_at: v.nullable(v.string()),
  hard_purge_at: v.string(),
  integrations_affected: v.number(),
  session_records_anonymised: v.number(),
  completion_email_sent_at: v.nullable(v.string()),
  merchant_log: v.array(LogEntry),
})
export type ProofRecord = v.InferOutput<typeof Proof>

/** The proof record (spec): never the raw email. */
export function toProof(row: RequestRow): ProofRecord {
  return {
    status: row.status,
    maskedEmail: row.masked_email,
    received_at: iso(row.received_at)!,
    completed_at: iso(row.completed_at),
    hard_purge_at: iso(row.hard_purge_at)!,
    integrations_affected: row.integrations_affected,
    session_records_anonymised: row.session_records_anonymised,
    completion_email_sent_at: iso(row.completion_email_sent_at),
    merchant_log: row.merchant_log,
  }
}

/** GET /public/dsar/proof/:code (JSON) and its human page, GET /public/dsar/status/:code (HTML, no scripts). */
export function addProofRoutes(ctx: PluginContext, dsar: Dsar): void {
  ctx.routes.add({
    method: 'GET',
    path: '/public/dsar/proof/:code',
    auth: 'none',
    summary: 'The proof of a deletion request, by its confirmation code',
    description: 'No auth; the code is unguessable. The email is masked. Unknown code: 404.',
    tags: ['Data deletion'],
    params: Code,
    responses: { 200: Proof, 404: { description: 'Unknown code' } },
    handler: async (event, { params }) => {
      event.res.headers.set('access-control-allow-origin', '*')
      event.res.headers.set('cache-control', 'no-store')
      const row = await dsar.store.byCode(params.code)
      if (!row) throw apiError(404, { message: 'Unknown confirmation code' }, { 'access-control-allow-origin': '*' })
      return toProof(row)
    },
  })

  ctx.routes.add({
    method: 'GET',
    path: '/public/dsar/status/:code',
    auth: 'none',
    summary: 'The status page of a deletion request (HTML)',
    description: 'What the proof says, readable by a person; linked from the mails. Served on server.statusBaseUrl.',
    tags: ['Data deletion'],
    params: Code,
    handler: async (event, { params }) => {
      const row = await dsar.store.byCode(params.code)
      if (!row) return html(event, 404, renderUnknownPage())
      return html(event, 200, renderStatusPage(toProof(row), { code: row.code, siteName: dsar.siteName(row.site_id), proofUrl: `/public/dsar/proof/${encodeURIComponent(row.code)}` }))
    },
  })
}

export function html(event: H3Event, status: number, body: string): string {
  event.res.status = status
  event.res.headers.set('content-type', 'text/html; charset=utf-8')
  event.res.headers.set('cache-control', 'no-store')
  event.res.headers.set('referrer-policy', 'no-referrer')
  event.res.headers.set('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'")
  return body
}

function iso(value: Date | string | null): string | null {
  return value === null ? null : new Date(value).toISOString()
}
