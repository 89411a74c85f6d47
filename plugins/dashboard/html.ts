/** HTML that is already safe to send: the result of `html` or `raw`. */
export class Html {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

/** Marks text as HTML: only for markup this code wrote itself, never for anything read from a request or the database. */
export const raw = (markup: string) => new Html(markup)

function piece(value: unknown): string {
  if (value instanceof Html) return value.value
  if (value === null || value === undefined || value === false) return ''
  if (Array.isArray(value)) return value.map(piece).join('')
  return escapeHtml(String(value))
}

/**
 * The tagged template every page is written with: each `${value}` is escaped, unless it is `Html` (a nested `html`
 * or `raw`); arrays are joined; null, undefined and false print nothing.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!
  return new Html(out)
}

/** The hidden CSRF field every POST form carries. */
export const csrfField = (token: string) => html`<input type="hidden" name="csrf" value="${token}">`

/**
 * A date for people: `<time datetime>` with the UTC text, which assets/dashboard.js rewrites in the viewer's time
 * zone. Null prints a dash.
 */
export function time(value: string | Date | null | undefined): Html {
  if (value === null || value === undefined) return html`<span class="muted">–</span>`
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) return html`<span class="muted">–</span>`
  const iso = date.toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
}

/** A value with a copy button (shown by assets/dashboard.js; without JavaScript the text can be selected). */
export function copyable(id: string, value: string, label: string, multiline = false): Html {
  const field = multiline
    ? html`<textarea id="${id}" readonly rows="3" aria-label="${label}">${value}</textarea>`
    : html`<input id="${id}" type="text" readonly value="${value}" aria-label="${label}">`
  return html`<div class="copy">${field}<button type="button" class="button secondary" data-copy="${id}" hidden>Copy</button></div>`
}

export interface LayoutInput {
  title: string
  body: Html
  /** Signed in: the viewer's label and the CSRF token for the sign-out form. */
  session?: { label: string, csrf: string }
  /** On a site's page: the site and its navigation (slug, link text), the current slug marked. */
  site?: { id: string, name: string, nav: readonly { slug: string, nav: string }[], current: string }
  flash?: { text: string, kind?: 'ok' | 'error', secret?: string }
}

/** The page around every dashboard view: header, site navigation, flash message, main content. No inline script or style. */
export function layout(input: LayoutInput): string {
  const { site, session, flash } = input
  const nav = site
    ? html`<nav class="site-nav" aria-label="${site.name}"><ul>${site.nav.map((item) => html`<li><a href="/dashboard/sites/${encodeURIComponent(site.id)}/${item.slug}"${
      item.slug === site.current ? raw(' aria-current="page"') : ''}>${item.nav}</a></li>`)}</ul></nav>`
    : ''
  const message = flash
    ? html`<div class="flash ${flash.kind ?? 'ok'}" role="status"><p>${flash.text}</p>${flash.secret ? copyable('flash-secret', flash.secret, 'The new key') : ''}</div>`
    : ''
  const account = session
    ? html`<div class="account"><span>${session.label}</span><form method="post" action="/dashboard/sign-out">${csrfField(session.csrf)}<button type="submit" class="link">Sign out</button></form></div>`
    : ''
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${input.title} · dcgate</title><link rel="stylesheet" href="/dashboard/assets/dashboard.css"><script src="/dashboard/assets/dashboard.js" defer></script></head>
<body><a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/dashboard">dcgate</a>${site ? html`<span class="site-name">${site.name}</span>` : ''}${account}</header>
${nav}<main id="main">${message}${input.body}</main></body></html>`}`
}
