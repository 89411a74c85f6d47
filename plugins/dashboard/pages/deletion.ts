import { html } from '../html.ts'
import { definePage } from '../page.ts'

export const deletionPage = definePage({
  slug: 'deletion', nav: 'Data deletion',
  render: async () => ({ title: 'Data deletion', body: html`<h1>Data deletion</h1>` }),
})
