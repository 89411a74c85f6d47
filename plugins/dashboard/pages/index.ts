import type { DashboardPage } from '../page.ts'
import { html } from '../html.ts'
import { definePage } from '../page.ts'
import { auditPage } from './audit.ts'
import { deletionPage } from './deletion.ts'
import { keysPage } from './keys.ts'
import { setupPage } from './setup.ts'

/** Stands in for Overview until part B's page replaces this entry. */
const overviewPlaceholder = definePage({
  slug: 'overview', nav: 'Overview',
  render: async ({ site }) => ({ title: 'Overview', body: html`<h1>Overview</h1><p>${site.name}: the charts come here.</p>` }),
})

/**
 * Every page of a site, in navigation order: one line per page. The first is where a site's link leads.
 * Slugs are unique; the navigation link text is the page's `nav`.
 */
export const pages: readonly DashboardPage[] = [
  overviewPlaceholder,
  keysPage,
  setupPage,
  deletionPage,
  auditPage,
]
