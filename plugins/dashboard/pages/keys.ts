import { html } from '../html.ts'
import { definePage } from '../page.ts'

export const keysPage = definePage({
  slug: 'keys', nav: 'Keys',
  render: async () => ({ title: 'Keys', body: html`<h1>Keys</h1>` }),
})
