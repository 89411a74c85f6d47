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
}

export function createDashboard(parts: Omit<Dashboard, 'ip' | 'audit' | 'baseUrl'>): Dashboard {
  const { ctx } = parts
  return {
    ...parts,
    baseUrl: publicBaseUrl(ctx.config),
    ip: (event) => clientIp(event, ctx.config.server.trustProxy),
    audit: (viewer, siteId, action, detail) =>
      insertAudit(ctx.prepared, { siteId, actor: typeof viewer === 'string' ? viewer : viewer.label, action, detail }),
  }
}
