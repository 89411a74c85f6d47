import type { SiteInput } from '../../core/sites/managed.ts'
import { csrfField, html, type Html } from './html.ts'

/**
 * The site form's fields: one text field per config key a shop owner sets by hand. Lists are one entry per line;
 * an event line is `key | Name | sends as | release` (the last two optional), e.g. `demo | Demo booked | Schedule`.
 */
export interface SiteFields { id: string, name: string, domains: string, members: string, events: string }

/** Messages of the config loader (`path: message`) by the form field they belong beside; `general` for the rest. */
export type FieldProblems = Partial<Record<keyof SiteFields | 'options' | 'general', string[]>>

const lines = (text: string) => text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean)

export function fieldsOf(form: URLSearchParams): SiteFields {
  const get = (name: string) => form.get(name) ?? ''
  return { id: get('id').trim(), name: get('name'), domains: get('domains'), members: get('members'), events: get('events') }
}

/** The fields over the stored site: what the form holds replaces those keys, the rest (destinations…) stays. */
export function applyFields(base: Partial<SiteInput>, fields: SiteFields): SiteInput {
  return {
    ...base,
    id: base.id ?? fields.id,
    name: fields.name,
    domains: lines(fields.domains),
    members: lines(fields.members),
    events: lines(fields.events).map(eventOf),
  }
}

function eventOf(line: string): Record<string, unknown> {
  const [key = '', name = '', sendsAs = '', release = ''] = line.split('|').map((part) => part.trim())
  return {
    key, name,
    ...(sendsAs && sendsAs.toLowerCase() !== 'none' ? { sendsAs } : {}),
    ...(release ? { release: release.toLowerCase().replace(/\s+/g, '_') } : {}),
  }
}

/** The stored site as the form shows it. */
export function fieldsFrom(input: Partial<SiteInput>): SiteFields {
  const list = (value: unknown) => (Array.isArray(value) ? value.map(String).join('\n') : '')
  const events = Array.isArray(input.events) ? input.events as Record<string, unknown>[] : []
  return {
    id: input.id ?? '', name: typeof input.name === 'string' ? input.name : '',
    domains: list(input.domains), members: list(input.members),
    events: events.map((e) => [e.key, e.name, e.sendsAs ?? '', e.release ?? ''].map((part) => String(part ?? '')).join(' | ').replace(/( \| )+$/, '')).join('\n'),
  }
}

/** Sorts the loader's messages by the field whose key their path starts with. */
export function byField(problems: readonly string[], optionsKey?: string): FieldProblems {
  const sorted: FieldProblems = {}
  for (const problem of problems) {
    const head = /^([A-Za-z]+)/.exec(problem)?.[1] ?? ''
    const field = (['id', 'name', 'domains', 'members', 'events'] as const).find((key) => key === head)
      ?? (optionsKey && head === optionsKey ? 'options' : 'general')
    ;(sorted[field] ??= []).push(problem)
  }
  return sorted
}

/** A labelled field with its messages beside it (aria-describedby, so a screen reader reads them with the field). */
export function field(name: keyof SiteFields | 'options', label: string, control: (attributes: Html) => Html, problems: FieldProblems, hint?: string, id = `field-${name}`): Html {
  const messages = problems[name] ?? []
  const attributes = html`id="${id}" name="${name}"${messages.length ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}`
  return html`<div class="field"><label for="${id}">${label}</label>${hint ? html`<p class="hint">${hint}</p>` : ''}${control(attributes)}${
    messages.length ? html`<p class="field-error" id="${id}-error">${messages.map((m, i) => html`${i ? html`<br>` : ''}${m}`)}</p>` : ''}</div>`
}

/** The form of a new site (`withId`) or of an existing one. */
export function siteForm(action: string, csrf: string, fields: SiteFields, problems: FieldProblems, withId: boolean, submit: string): Html {
  const general = problems.general ?? []
  return html`<form method="post" action="${action}" class="stack site-form">${csrfField(csrf)}<input type="hidden" name="part" value="site">
${general.length ? html`<div class="flash error" role="alert">${general.map((m) => html`<p>${m}</p>`)}</div>` : ''}
${withId ? field('id', 'Site id', (a) => html`<input type="text" ${a} value="${fields.id}" required maxlength="63" autocomplete="off">`, problems, 'Lower-case letters, digits, _ or -; it never changes.') : ''}
${field('name', 'Name', (a) => html`<input type="text" ${a} value="${fields.name}" maxlength="200">`, problems)}
${field('domains', 'Domains', (a) => html`<textarea ${a} rows="2">${fields.domains}</textarea>`, problems, 'One per line, e.g. shop.example.')}
${field('members', 'Members', (a) => html`<textarea ${a} rows="3">${fields.members}</textarea>`, problems, 'Email addresses, one per line: they sign in with an emailed link and see this site.')}
${field('events', 'Events', (a) => html`<textarea ${a} rows="4">${fields.events}</textarea>`, problems, 'One per line: key | Name | sends as (Purchase, Lead, CompleteRegistration, Schedule) | release (immediately or when qualified).')}
<div class="actions"><button type="submit" class="button">${submit}</button></div></form>`
}
