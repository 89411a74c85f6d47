import type { SiteInput } from '../../../core/sites/managed.ts'
import { mayEdit } from '../access.ts'
import { csrfField, html, type Html } from '../html.ts'
import { definePage, type ActionContext, type PageContext, type PageResult } from '../page.ts'
import { byField, field, fieldsFrom, fieldsOf, applyFields, siteForm, type FieldProblems, type SiteFields } from '../site-form.ts'
import { createSiteEdits, type EditOutcome } from '../site-edits.ts'
import { readOnlySettings } from './settings-read-only.ts'

type Section = 'destinations' | 'sources'
const KIND = { destinations: 'ad-platform', sources: 'intake-source' } as const
const LABEL = { destinations: 'Platform', sources: 'Source' } as const

/** What the form posted back shows again: the fields as entered and the loader's messages beside them. */
interface Retry { part: 'site' | Section, fields?: SiteFields, name?: string, options?: string, problems: FieldProblems }

const mayEditThis = (ctx: PageContext) => mayEdit(ctx.viewer, ctx.site, ctx.plugin.config.dashboard?.membersMayEdit)

/**
 * A site's settings. A site made in the dashboard is edited here (name, domains, members, events, destinations,
 * sources), validated by the config loader's schemas, applied on every instance within seconds and audited; a
 * config-file site is shown read-only, "managed in the config file".
 */
export const settingsPage = definePage({
  slug: 'settings',
  nav: 'Settings',
  async render(ctx) {
    return render(ctx)
  },
  async submit(ctx) {
    if (ctx.site.origin !== 'dashboard') return { ...await render(ctx), status: 409 }
    if (!mayEditThis(ctx)) return { title: 'Settings', status: 403, body: html`<h1>Settings</h1><p>Only the operator changes this site's settings.</p>` }
    const edits = createSiteEdits(ctx.plugin)
    const part = ctx.form.get('part') ?? ''
    const name = (ctx.form.get('name') ?? '').trim()
    if (part === 'site') {
      const fields = fieldsOf(ctx.form)
      const changed = (['name', 'domains', 'members', 'events'] as const).filter((key) => ctx.form.has(key))
      const outcome = await edits.update(ctx.site.id, (input) => applyFields(input, fields), ctx.viewer, { action: 'edited site', detail: changed.join(', ') })
      return answer(ctx, outcome, { part, fields, problems: byField(outcome.ok ? [] : outcome.problems) }, 'Saved; every instance applies it within seconds.')
    }
    if (part === 'destinations' || part === 'sources') {
      const text = ctx.form.get('options') ?? ''
      const options = parseObject(text)
      if (!options) return { ...await render(ctx, { part, name, options: text, problems: { options: ['options: must be a JSON object such as {"token": "…"}'] } }), status: 400 }
      const outcome = part === 'destinations'
        ? await edits.setDestination(ctx.site.id, name, options, ctx.viewer)
        : await edits.update(ctx.site.id, (input) => ({ ...input, sources: { ...(input.sources as object | undefined), [name]: options } }), ctx.viewer, { action: 'set source', detail: name })
      return answer(ctx, outcome, { part, name, options: text, problems: byField(outcome.ok ? [] : outcome.problems, part) }, `${name} saved.`)
    }
    if (part === 'remove-destination' || part === 'remove-source') {
      const outcome = part === 'remove-destination'
        ? await edits.removeDestination(ctx.site.id, name, ctx.viewer)
        : await edits.update(ctx.site.id, (input) => withoutKey(input, 'sources', name), ctx.viewer, { action: 'removed source', detail: name })
      return answer(ctx, outcome, { part: 'site', problems: byField(outcome.ok ? [] : outcome.problems) }, `${name} removed.`)
    }
    return { title: 'Settings', status: 400, body: html`<h1>Settings</h1><p>This form is not one of this page's.</p>` }
  },
})

async function answer(ctx: ActionContext, outcome: EditOutcome, retry: Retry, done: string): Promise<PageResult | { flash: { text: string } }> {
  if (outcome.ok) return { flash: { text: done } }
  if ('readOnly' in outcome) return { ...await render(ctx), status: 409 }
  return { ...await render(ctx, retry), status: 400 }
}

async function render(ctx: PageContext, retry?: Retry): Promise<PageResult> {
  const stored = ctx.site.origin === 'dashboard' ? await ctx.plugin.managedSites.read(ctx.site.id) : undefined
  if (!stored) return { title: 'Settings', body: readOnlySettings(ctx.site.config) }
  if (!mayEditThis(ctx)) return { title: 'Settings', body: html`<h1>Settings</h1><p class="hint">Made in the dashboard. Only the operator changes it.</p>${readOnlySettings(ctx.site.config, false)}` }
  const action = ctx.href('settings')
  const fields = retry?.part === 'site' && retry.fields ? retry.fields : fieldsFrom(stored)
  return {
    title: 'Settings',
    body: html`<h1>Settings</h1><p class="hint">Made in the dashboard: changes apply on every instance within seconds, without a restart. <code>dcgate sites export ${ctx.site.id}</code> prints it as config.</p>
<div class="card"><h2>Site</h2>${siteForm(action, ctx.csrf, fields, retry?.part === 'site' ? retry.problems : {}, false, 'Save')}</div>
${section(ctx, stored, 'destinations', retry)}
${section(ctx, stored, 'sources', retry)}`,
  }
}

/** The configured destinations (or sources) with their option names only (values may be tokens), and a form to add one. */
function section(ctx: PageContext, stored: SiteInput, key: Section, retry?: Retry): Html {
  const entries = Object.entries((stored[key] ?? {}) as Record<string, Record<string, unknown>>)
  const names = ctx.plugin.registry.list(KIND[key]).map((d) => d.name)
  const mine = retry?.part === key ? retry : undefined
  const remove = key === 'destinations' ? 'remove-destination' : 'remove-source'
  const rows = entries.map(([name, options]) => html`<tr><td>${name}</td><td>${Object.keys(options ?? {}).join(', ')}</td>
<td><form method="post" action="${ctx.href('settings')}">${csrfField(ctx.csrf)}<input type="hidden" name="part" value="${remove}"><input type="hidden" name="name" value="${name}">
<button type="submit" class="button secondary small">Remove ${name}</button></form></td></tr>`)
  const title = key === 'destinations' ? 'Destinations' : 'Sources'
  return html`<div class="card"><h2>${title}</h2>${entries.length
    ? html`<div class="table-wrap"><table><thead><tr><th scope="col">${LABEL[key]}</th><th scope="col">Options set</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p>None yet.</p>`}
<form method="post" action="${ctx.href('settings')}" class="stack">${csrfField(ctx.csrf)}<input type="hidden" name="part" value="${key}">
<div class="field"><label for="${key}-name">${LABEL[key]}</label><select id="${key}-name" name="name">${names.map((name) => html`<option value="${name}"${name === mine?.name ? html` selected` : ''}>${name}</option>`)}</select></div>
${field('options', 'Options', (a) => html`<textarea ${a} rows="4" spellcheck="false">${mine?.options ?? ''}</textarea>`, mine?.problems ?? {}, 'As a JSON object, the keys the config file takes (docs/adapters). Saving replaces this one’s options; tokens are stored encrypted.', `${key}-options`)}
${mine?.problems.general?.length ? html`<p class="field-error">${mine.problems.general.join(' ')}</p>` : ''}
<div class="actions"><button type="submit" class="button secondary">Save ${key === 'destinations' ? 'destination' : 'source'}</button></div></form></div>`
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  }
  catch {
    return undefined
  }
}

function withoutKey(input: SiteInput, key: Section, name: string): SiteInput {
  const rest = { ...(input[key] as Record<string, unknown> | undefined) }
  delete rest[name]
  return { ...input, [key]: rest }
}
