import type { AdminClient } from '../admin-client.ts'
import { configLiteral } from '../config-literal.ts'
import { CliError, table, type Output } from '../output.ts'

interface SiteSummary { id: string, name: string, status: string, plan: string, domains: string[], cop_key: string }
interface SiteDetail extends SiteSummary { release_secret: string, script_tag: string, release_url: string }

export async function sitesCommand(client: AdminClient, out: Output, args: string[]): Promise<void> {
  const [action, id] = args
  if (action === 'list') {
    const { sites } = await client.request<{ sites: SiteSummary[] }>('GET', '/sites')
    out.result(sites, () => sites.length === 0
      ? 'No sites configured.'
      : table([['ID', 'NAME', 'STATUS', 'PLAN', 'COP_KEY'], ...sites.map((s) => [s.id, s.name, s.status, s.plan, s.cop_key])]))
    return
  }
  if (action === 'show') {
    if (!id) throw new CliError('Usage: dcgate sites show <id>', 2)
    const site = await client.request<SiteDetail>('GET', `/sites/${encodeURIComponent(id)}`)
    out.result(site, () => [
      `${site.name} (${site.id})`,
      `status          ${site.status}`,
      `plan            ${site.plan}`,
      `domains         ${site.domains.join(', ') || '(none)'}`,
      `cop_key         ${site.cop_key}`,
      `release secret  ${site.release_secret}`,
      '',
      'Script tag (paste into every page):',
      `  ${site.script_tag}`,
      '',
      'Release URL (qualification gate: POST {"event_name","email"} when a lead is qualified):',
      `  ${site.release_url}`,
    ].join('\n'))
    return
  }
  if (action === 'export') {
    if (!id) throw new CliError('Usage: dcgate sites export <id>', 2)
    const { site } = await client.request<{ site: Record<string, unknown> }>('GET', `/sites/${encodeURIComponent(id)}/config`)
    out.result(site, () => [
      `// Site "${id}", made in the dashboard: paste it into the sites list of dcgate.config.ts. It holds its tokens:`,
      '// keep them out of version control (process.env). copKey and releaseSecret keep its script tag and release URL.',
      `${configLiteral(site)},`,
    ].join('\n'))
    return
  }
  throw new CliError('Usage: dcgate sites list | dcgate sites show <id> | dcgate sites export <id>', 2)
}
