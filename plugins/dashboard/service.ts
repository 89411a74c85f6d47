import type { H3Event } from 'h3'
import { clientIp } from '../../core/http/client-ip.ts'
import type { Mailer } from '../../core/mail/mailer.ts'
import type { PluginContext } from '../../core/plugin.ts'
import type { AdminApi } from './admin-api.ts'
import type { Links } from './links.ts'
import type { DashboardOptions } from './options.ts'
import type { Viewer } from './page.ts'
import { insertAudit } from './queries/audit.ts'
import { publicBaseUrl } from './urls.ts'
import type { Sessions } from './session.ts'
import { createSiteEdits, type SiteEdits } from './site-edits.ts'

/** What the dashboard's routes share, built once in setup. */
export interface Dashboard {
  ctx: PluginContext
  options: DashboardOptions
  sessions: Sessions
  links: Links
  admin: AdminApi
  mailer: Mailer
  adminToken: string
  /** The server's public URL, for the emailed links. */
  baseUrl: string
  ip: (event: H3Event) => string | undefined
  audit: (viewer: Viewer | string, siteId: string | null, action: string, detail?: string) => Promise<void>
  /** Changes to the sites made in the dashboard: validated, applied on every instance, audited. */
  edits: SiteEdits
}

export function createDashboard(parts: Omit<Dashboard, 'ip' | 'audit' | 'baseUrl' | 'edits'>): Dashboard {
  const { ctx } = parts
  return {
    ...parts,
    baseUrl: publicBaseUrl(ctx.config),
    edits: createSiteEdits(ctx),
    ip: (event) => clientIp(event, ctx.config.server.trustProxy),
    audit: (viewer, siteId, action, detail) =>
      insertAudit(ctx.prepared, { siteId, actor: typeof viewer === 'string' ? viewer : viewer.label, action, detail }),
  }
}
