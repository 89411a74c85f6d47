import { html } from '../html.ts'
import { definePage } from '../page.ts'

export const auditPage = definePage({
  slug: 'audit', nav: 'Audit log',
  render: async () => ({ title: 'Audit log', body: html`<h1>Audit log</h1>` }),
})
