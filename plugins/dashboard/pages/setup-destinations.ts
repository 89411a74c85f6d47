import { randomUUID } from 'node:crypto'
import { STANDARD_EVENTS } from '../../../core/config/schema.ts'
import { planSiteEvents } from '../../../core/delivery/event-plan.ts'
import { platformCredentials } from '../../../core/delivery/queries/credentials.ts'
import { sampleEvent } from '../../../core/delivery/sample-event.ts'
import { sendTestEvent, testConnection, type TryResult } from '../../../core/delivery/try-platform.ts'
import type { StandardEvent } from '../../../core/delivery/types.ts'
import type { AdPlatformDefinition, Configured } from '../../../core/registry.ts'
import { csrfField, html } from '../html.ts'
import { actionError, type ActionContext, type ActionResult, type PageContext } from '../page.ts'
import { overLimit } from '../rate-limit.ts'

/** Tests one person may run on one site per window: each is a call to the vendor with the site's credentials. */
const TESTS_PER_WINDOW = 10
const WINDOW_SECONDS = 60
const CODE = /^[\w-]{1,64}$/

/**
 * The Setup page's "Destinations" card: per ad platform, "Test connection" (a documented call that reads the account)
 * and "Send test event" (a sample conversion in the platform's test mode, never stored), answered with the platform's
 * status and words in the flash. A platform without a test mode says so and sends nothing.
 */
export function destinationsCard({ site, plugin, csrf, href }: PageContext) {
  const configured = plugin.registry.forSite(site.id, 'ad-platform')
  if (!configured.length) return html`<div class="card"><h2>Destinations</h2><p>No ad platform is configured for this site.</p></div>`
  // The event offered first is one the platform will take, as the plan says.
  const plan = planSiteEvents(site, plugin.registry)
  const firstSent = (name: string) => STANDARD_EVENTS.find((e) => plan.find((r) => r.key === e)?.steps.find((s) => s.platform === name)?.step.kind === 'send')
  return html`<div class="card"><h2>Destinations</h2><p class="hint">Test before going live: nothing sent here is stored or counted as a conversion.</p>
<div class="table-wrap"><table><thead><tr><th scope="col">Platform</th><th scope="col">Connection</th><th scope="col">Test event</th></tr></thead><tbody>${configured.map(({ definition }) => {
    const platform = definition as AdPlatformDefinition<unknown>
    const label = platform.label ?? platform.name
    const preferred = firstSent(platform.name)
    return html`<tr><th scope="row">${label}</th>
<td><form method="post" action="${href('setup', 'test-connection')}">${csrfField(csrf)}<input type="hidden" name="platform" value="${platform.name}"><button type="submit" class="button secondary" aria-label="Test connection to ${label}">Test connection</button></form>${
  platform.connectionTest ? '' : html`<p class="muted">${platform.connectionTestGap ?? `${label} documents no read-only call.`}</p>`}</td>
<td>${platform.testEvents
    ? html`<form method="post" action="${href('setup', 'send-test-event')}">${csrfField(csrf)}<input type="hidden" name="platform" value="${platform.name}">
<label for="test-event-${platform.name}">Event</label> <select id="test-event-${platform.name}" name="event">${STANDARD_EVENTS.map((e) => html`<option value="${e}"${e === preferred ? html` selected` : ''}>${e}</option>`)}</select>${
  platform.testEvents.codeLabel ? html` <label for="test-code-${platform.name}">${platform.testEvents.codeLabel}</label> <input id="test-code-${platform.name}" name="code" maxlength="64" autocomplete="off">` : ''}
<button type="submit" class="button secondary" aria-label="Send test event to ${label}">Send test event</button></form>`
    : html`<button type="button" class="button secondary" disabled aria-label="Send test event to ${label}">Send test event</button><p class="muted">No test mode: ${platform.testEventsGap ?? `${label} documents none`}. Nothing is sent.</p>`}</td></tr>`
  })}</tbody></table></div></div>`
}

export const destinationActions = {
  async 'test-connection'(ctx: ActionContext): Promise<ActionResult> {
    const { platform, options } = await chosen(ctx)
    const result = await testConnection(platform, options, tryContext(ctx, platform))
    return answered(platform, 'Test connection', result)
  },
  async 'send-test-event'(ctx: ActionContext): Promise<ActionResult> {
    const { platform, options } = await chosen(ctx)
    const event = ctx.form.get('event') ?? 'Purchase'
    if (!(STANDARD_EVENTS as readonly string[]).includes(event)) throw actionError(400, `The event must be one of ${STANDARD_EVENTS.join(', ')}.`)
    const code = ctx.form.get('code')?.trim() || undefined
    if (code !== undefined && !CODE.test(code)) throw actionError(400, 'The test event code holds letters, digits, "-" and "_" only, at most 64.')
    const sample = sampleEvent(ctx.site.id, ctx.site.config, event as StandardEvent, `dcgate-test-${randomUUID()}`)
    const result = await sendTestEvent(platform, options, sample, code, tryContext(ctx, platform))
    return answered(platform, `Send test event (${event})`, result)
  },
}

/** The platform the form names, once it is one of the site's and the person is within the rate limit. */
async function chosen({ site, plugin, viewer, form }: ActionContext): Promise<{ platform: AdPlatformDefinition<unknown>, options: unknown }> {
  const name = form.get('platform') ?? ''
  const found = plugin.registry.forSite(site.id, 'ad-platform').find((c: Configured<'ad-platform'>) => c.definition.name === name)
  if (!found) throw actionError(400, 'This site has no such destination.')
  const wait = await overLimit(plugin.storage, 'platform-test', `${site.id}\n${viewer.label}`, TESTS_PER_WINDOW, WINDOW_SECONDS)
  if (wait !== undefined) throw actionError(429, `Too many tests in a minute; try again in ${wait} s.`)
  return { platform: found.definition as AdPlatformDefinition<unknown>, options: found.options }
}

function tryContext({ plugin, site }: ActionContext, platform: AdPlatformDefinition<unknown>) {
  return { timeoutMs: plugin.config.delivery.requestTimeoutMs, credentials: platformCredentials(plugin.prepared, plugin.keyring, site.id, platform.name) }
}

function answered(platform: AdPlatformDefinition<unknown>, what: string, result: TryResult): ActionResult {
  const label = platform.label ?? platform.name
  const status = result.status === null ? 'no call answered' : `HTTP ${result.status}`
  const text = `${label} · ${what}: ${result.ok ? 'OK' : 'failed'} (${status}). ${result.message}`
  return { audit: { action: what.startsWith('Send') ? 'sent a test event' : 'tested a connection', detail: `${platform.name}: ${result.ok ? 'ok' : 'failed'}${result.status === null ? '' : ` (HTTP ${result.status})`}` }, flash: { text, kind: result.ok ? 'ok' : 'error' } }
}
