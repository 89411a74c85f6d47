import type { ConsolaInstance } from 'consola'
import type { DcgateApp } from './app.ts'
import { adminTokenFile } from './admin/token.ts'
import { scriptTag } from './sites/script-tag.ts'

/** What an operator needs at a glance after start: where it listens, on what, and each site's tag. */
export function printBanner(logger: ConsolaInstance, dcgate: DcgateApp, url: string): void {
  const { config, database, plugins, context } = dcgate
  const baseUrl = config.server.baseUrl ?? url
  const scriptHost = config.server.cdnUrl ?? baseUrl
  const sites = context.sites.list()
  const lines = [
    `dcgate listening on ${url}`,
    `  database  ${database.description}`,
    `  storage   ${config.storage.url ? 'redis' : 'memory (single instance)'}`,
    `  plugins   ${plugins.map((p) => p.name).join(', ') || '(none)'}`,
    `  api docs  ${baseUrl.replace(/\/+$/, '')}/docs`,
    ...(plugins.some((p) => p.name === 'dashboard') ? [`  dashboard ${baseUrl.replace(/\/+$/, '')}/dashboard (admin token: ${tokenSource(config)})`] : []),
    `  sites     ${sites.length === 0 ? '(none configured)' : ''}`,
    ...sites.map((s) => `    ${s.id} (${s.status}) cop_key ${s.copKey}\n      ${scriptTag(scriptHost, s.copKey)}`),
    `  first key: npx dcgate keys create --site ${sites[0]?.id ?? '<id>'} --name first`,
  ]
  logger.log(lines.join('\n'))
}

/** Where the operator finds the admin token; never the token itself (the log may be shipped elsewhere). */
function tokenSource(config: DcgateApp['config']): string {
  return config.admin.token ? 'admin.token in the config' : `cat ${adminTokenFile(config.dataDir)}`
}
