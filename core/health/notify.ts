/**
 * How an alert reaches people: one mail per recipient (core/mail/mailer.ts) and, where `sites[].alerts.webhookUrl` is
 * set, one POST of JSON (docs/delivery-health.md#the-webhook), signed when `webhookSecret` is set.
 */
import { createHmac } from 'node:crypto'
import type { Mailer } from '../mail/mailer.ts'
import { describeCause, type AlertCause } from './causes.ts'

/** A webhook receiver gets this long to answer; the alert job goes on without it. */
export const WEBHOOK_TIMEOUT_MS = 10_000
export const SIGNATURE_HEADER = 'x-dcgate-signature'

export interface AlertNotice {
  kind: 'alert' | 'recovered'
  site: { id: string, name: string }
  provider: string
  cause: AlertCause
  detail: string
  /** When the cause began to hold (alert), or when it cleared (recovered). */
  since: Date
  /** The site's health view in the dashboard. */
  dashboardUrl: string
}

export interface AlertChannels {
  mailer: Mailer
  recipients: readonly string[]
  webhookUrl?: string
  webhookSecret?: string
}

/** Sends on every channel; answers how many deliveries succeeded and the errors of the others (never throws). */
export async function notify(notice: AlertNotice, channels: AlertChannels): Promise<{ delivered: number, errors: unknown[] }> {
  const { subject, text } = compose(notice)
  const attempts: Promise<unknown>[] = channels.recipients.map((to) => channels.mailer.send({ to, subject, text }))
  if (channels.webhookUrl) attempts.push(postWebhook(channels.webhookUrl, channels.webhookSecret, toPayload(notice)))
  const results = await Promise.allSettled(attempts)
  return {
    delivered: results.filter((r) => r.status === 'fulfilled').length,
    errors: results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : [])),
  }
}

export function compose(notice: AlertNotice): { subject: string, text: string } {
  const what = describeCause(notice.cause)
  if (notice.kind === 'recovered') {
    return {
      subject: `[dcgate] ${notice.site.name}: ${notice.provider} recovered (${what})`,
      text: `${notice.provider} on ${notice.site.name} (${notice.site.id}) is fine again: the cause of the earlier alert, ${what}, `
        + `no longer holds since ${notice.since.toISOString()}.\n\nDelivery health: ${notice.dashboardUrl}\n`,
    }
  }
  return {
    subject: `[dcgate] ${notice.site.name}: ${notice.provider} needs attention (${what})`,
    text: `${notice.detail}\n\nSince ${notice.since.toISOString()}. You get this mail at most once an hour for this cause, `
      + `and one more when it clears.\n\nDelivery health: ${notice.dashboardUrl}\n`,
  }
}

export function toPayload(notice: AlertNotice): Record<string, unknown> {
  return {
    type: notice.kind === 'alert' ? 'delivery_health.alert' : 'delivery_health.recovered',
    site: notice.site,
    destination: notice.provider,
    cause: notice.cause,
    detail: notice.detail,
    since: notice.since.toISOString(),
    dashboard_url: notice.dashboardUrl,
  }
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>`: the time is signed so a replay can be refused. */
export function signWebhook(secret: string, body: string, now = Date.now()): string {
  const t = Math.floor(now / 1000)
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`
}

async function postWebhook(url: string, secret: string | undefined, payload: Record<string, unknown>): Promise<void> {
  const body = JSON.stringify(payload)
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'dcgate-alerts' }
  if (secret) headers[SIGNATURE_HEADER] = signWebhook(secret, body)
  const response = await fetch(url, { method: 'POST', headers, body, redirect: 'error', signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS) })
  await response.body?.cancel()
  if (!response.ok) throw new Error(`the alert webhook answered HTTP ${response.status}`)
}
