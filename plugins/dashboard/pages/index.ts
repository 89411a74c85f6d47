import type { DashboardPage } from '../page.ts'
import { auditPage } from './audit.ts'
import { deletionPage } from './deletion.ts'
import { deliveriesPage } from './deliveries.ts'
import { heldPage } from './held.ts'
import { keysPage } from './keys.ts'
import { livePage } from './live.ts'
import { overviewPage } from './overview.ts'
import { reconciliationPage } from './reconciliation.ts'
import { sessionsPage } from './sessions.ts'
import { settingsPage } from './settings.ts'
import { setupPage } from './setup.ts'
import { usersPage } from './users.ts'

/**
 * Every page of a site, in navigation order: one line per page. The first is where a site's link leads.
 * Slugs are unique; the navigation link text is the page's `nav`.
 */
export const pages: readonly DashboardPage[] = [
  overviewPage,
  deliveriesPage,
  reconciliationPage,
  livePage,
  heldPage,
  keysPage,
  setupPage,
  settingsPage,
  deletionPage,
  usersPage,
  sessionsPage,
  auditPage,
]
