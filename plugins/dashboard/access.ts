import { canonicalEmail } from '../../core/identity/email.ts'
import type { ActiveSite, SiteDirectory } from '../../core/sites/directory.ts'
import type { Viewer } from './page.ts'

/**
 * Whether the viewer may see the site: the operator every site; a member the sites whose `members` list their
 * address now (read from the config on every request, so removing someone from the list ends their access).
 */
export function mayView(viewer: Viewer, site: ActiveSite): boolean {
  if (viewer.kind === 'operator') return true
  return viewer.email !== undefined && site.config.members.some((member) => canonicalEmail(member) === viewer.email)
}

/**
 * Whether the viewer may change the site (settings, connections): the operator, or a member of it while the config
 * file's `dashboard.membersMayEdit` allows members to edit.
 */
export function mayEdit(viewer: Viewer, site: ActiveSite, membersMayEdit: boolean | undefined): boolean {
  return mayView(viewer, site) && (viewer.kind === 'operator' || membersMayEdit === true)
}

export function sitesOf(viewer: Viewer, sites: SiteDirectory): ActiveSite[] {
  return sites.list().filter((site) => mayView(viewer, site))
}

/** Whether the address is a member of any site: only those are sent a sign-in link. */
export function isMember(email: string, sites: SiteDirectory): boolean {
  return sites.list().some((site) => site.config.members.some((member) => canonicalEmail(member) === email))
}
