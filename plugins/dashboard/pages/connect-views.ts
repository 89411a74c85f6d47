/**
 * The Connect buttons' markup: the "Connections" card of the Setup page (a Connect or Disconnect button per platform
 * whose app is configured, Meta's token field) and the page where the owner picks what the account holds.
 */
import { STANDARD_EVENTS } from '../../../core/config/schema.ts'
import type { PickField } from '../connect/types.ts'
import { appOf, vendors } from '../connect/vendors.ts'
import { mayEdit } from '../access.ts'
import { csrfField, html, type Html } from '../html.ts'
import type { PageContext } from '../page.ts'
import { publicBaseUrl } from '../urls.ts'

const action = (platform: string, what: string) => `/dashboard/oauth/${platform}/${what}`

const mayConnect = ({ plugin, viewer, site }: PageContext) => mayEdit(viewer, site, plugin.config.dashboard?.membersMayEdit)

/** The origins of the consent pages the Connect buttons lead to, for the page's CSP form-action. */
export function connectFormTargets(ctx: PageContext): string[] {
  if (!mayConnect(ctx)) return []
  const base = publicBaseUrl(ctx.plugin.config)
  const origins = vendors.map((vendor) => appOf(ctx.plugin.config, vendor, base)?.authorizeUrl).filter((url): url is string => Boolean(url)).map((url) => new URL(url).origin)
  return [...new Set(origins)]
}

/** One row per platform the operator configured an app for (Meta always: it takes a pasted token). */
export function connectionsCard(ctx: PageContext): Html {
  const { site, plugin, csrf } = ctx
  const base = publicBaseUrl(plugin.config)
  if (!mayConnect(ctx)) {
    return html`<div class="card"><h2>Connections</h2><p class="hint">The operator connects the platforms of this site.</p></div>`
  }
  const connected = new Set([
    ...plugin.registry.forSite(site.id, 'ad-platform').map((c) => c.definition.name),
    ...plugin.registry.forSite(site.id, 'crm-poller').map((c) => c.definition.name),
  ])
  const rows = vendors.filter((vendor) => appOf(plugin.config, vendor, base)).map((vendor) => {
    const hidden = html`${csrfField(csrf)}<input type="hidden" name="site" value="${site.id}">`
    if (connected.has(vendor.adapter)) {
      return html`<tr><td>${vendor.label}</td><td><span class="badge ok">Connected</span></td><td><form method="post" action="${action(vendor.platform, 'disconnect')}">${hidden}<button type="submit" class="button secondary" aria-label="Disconnect ${vendor.label}">Disconnect</button></form></td></tr>`
    }
    const form = vendor.platform === 'meta'
      ? html`<form method="post" action="${action('meta', 'token')}" class="actions">${hidden}<label>System-user access token <input type="password" name="accessToken" autocomplete="off" required></label><button type="submit" class="button" aria-label="Connect ${vendor.label}">Connect</button></form>`
      : html`<form method="post" action="${action(vendor.platform, 'start')}">${hidden}<button type="submit" class="button" aria-label="Connect ${vendor.label}">Connect</button></form>`
    return html`<tr><td>${vendor.label}</td><td><span class="muted">Not connected</span></td><td>${form}</td></tr>`
  })
  return html`<div class="card"><h2>Connections</h2><p class="hint">Connect a platform with your account there: dcgate lists what it holds for you to pick, no ids to copy.</p>
<div class="table-wrap"><table><thead><tr><th scope="col">Platform</th><th scope="col">State</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table></div></div>`
}

/** The pick form: a list per field (per standard event where the field is), posted back with the flow id. */
export function pickForm(input: { platform: string, label: string, flow: string, csrf: string, fields: PickField[], siteName: string }): Html {
  // Labels name their control by id, not by wrapping it: a wrapped select's name would include its chosen option.
  const select = (name: string, label: string, field: PickField, optional: boolean) => html`<label for="pick-${name}">${label}</label> <select id="pick-${name}" name="${name}"${optional ? '' : html` required`}>
<option value="">${optional ? 'Not sent' : 'Pick one'}</option>${field.choices.map((choice) => html`<option value="${choice.value}">${choice.label}</option>`)}</select>`
  const controls = input.fields.map((field) => {
    if (field.text) return html`<p><label for="pick-${field.name}">${field.label}</label> <input type="text" id="pick-${field.name}" name="${field.name}"${field.optional ? '' : html` required`}></p>`
    if (!field.perEvent) return html`<p>${select(field.name, field.label, field, !!field.optional)}</p>`
    return html`<fieldset><legend>${field.label} per event</legend>${STANDARD_EVENTS.map((event) => html`<p>${select(`${field.name}.${event}`, event, field, true)}</p>`)}</fieldset>`
  })
  const empty = input.fields.some((field) => !field.text && !field.optional && field.choices.length === 0)
  return html`<h1>Connect ${input.label}</h1><p class="hint">Pick what ${input.siteName} sends to. Nothing is saved until you press Connect.</p>
${empty ? html`<p class="flash error">This account holds nothing to pick here. Sign in with another account, or create it at ${input.label} first.</p>` : ''}
<form method="post" action="${action(input.platform, 'pick')}" class="card">${csrfField(input.csrf)}<input type="hidden" name="flow" value="${input.flow}">${controls}
<p class="actions"><button type="submit" class="button">Connect</button></p></form>`
}

/** After the vendor's redirect: a same-site step to the pick page (the session cookie is SameSite=Strict, not sent on the vendor's redirect). */
export function continueView(href: string): Html {
  return html`<meta http-equiv="refresh" content="0;url=${href}"><h1>Signed in</h1><p><a class="button" href="${href}">Continue</a></p>`
}
