import { html } from '../html.ts'
import { definePage } from '../page.ts'

export const setupPage = definePage({
  slug: 'setup', nav: 'Setup',
  render: async () => ({ title: 'Setup', body: html`<h1>Setup</h1>` }),
})
