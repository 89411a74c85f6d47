import type { H3Event } from 'h3'
import { sameSecret } from '../csrf.ts'
import { html, layout } from '../html.ts'
import { readForm, redirect, sendPage, sendProblem } from '../respond.ts'
import type { Dashboard } from '../service.ts'
import { applyFields, byField, fieldsOf, siteForm, type FieldProblems, type SiteFields } from '../site-form.ts'

const tags = ['Dashboard']
const EMPTY: SiteFields = { id: '', name: '', domains: '', members: '', events: '' }

/**
 * "New site" (the operator only): a form with the site's id, name, domains, members and events, checked by the config
 * loader's schemas; the site is stored, applied on every instance and audited, then its settings page opens.
 */
export function addNewSiteRoutes(dashboard: Dashboard): void {
  const { ctx, sessions } = dashboard

  const page = (event: H3Event, status: number, session: { label: string, csrf: string }, fields: SiteFields, problems: FieldProblems) =>
    sendPage(event, status, layout({
      title: 'New site', session,
      body: html`<h1>New site</h1><p class="hint">Stored in the database and applied on every instance within seconds. Destinations and sources are added on its Settings page.</p>
<div class="card">${siteForm('/dashboard/new-site', session.csrf, fields, problems, true, 'Create site')}</div>`,
    }))

  /** The operator's session, or the answer refusing anyone else. */
  const operator = async (event: H3Event) => {
    const current = await sessions.read(event)
    if (!current) return { answer: redirect(event, '/dashboard') }
    const account = { label: current.session.viewer.label, csrf: current.session.csrf }
    if (current.session.viewer.kind !== 'operator') return { answer: sendProblem(event, 403, 'Not allowed', 'Only the operator makes new sites.', account) }
    return { current, account }
  }

  ctx.routes.add({
    method: 'GET', path: '/dashboard/new-site', auth: 'none', tags, summary: 'The form of a new site (operator)',
    handler: async (event) => {
      const opened = await operator(event)
      return opened.current ? page(event, 200, opened.account, EMPTY, {}) : opened.answer
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/new-site', auth: 'none', tags, summary: 'Create a site (operator)',
    handler: async (event) => {
      const opened = await operator(event)
      if (!opened.current) return opened.answer
      const { current, account } = opened
      const read = await readForm(event)
      if ('problem' in read) return sendProblem(event, read.status, 'Not accepted', read.problem, account)
      if (!sameSecret(read.form.get('csrf'), current.session.csrf)) {
        return sendProblem(event, 403, 'Not accepted', 'This form expired or came from elsewhere. Reload the page and try again.', account)
      }
      const fields = fieldsOf(read.form)
      const outcome = await dashboard.edits.create(applyFields({}, fields), current.session.viewer)
      if (!outcome.ok) return page(event, 400, account, fields, byField(outcome.problems))
      await sessions.save(current.key, { ...current.session, flash: { text: `Site “${outcome.site.name}” created; it answers on every instance within seconds. Add its destinations below.` } })
      return redirect(event, `/dashboard/sites/${encodeURIComponent(outcome.site.id)}/settings`)
    },
  })
}
