import type { KeySummary } from '../../auth/keys.ts'
import type { AdminClient } from '../admin-client.ts'
import { CliError, table, type Output } from '../output.ts'

export interface KeysOptions { site?: string, name?: string }

const USAGE = 'Usage: dcgate keys create --site <id> --name <name> | keys list --site <id> | keys delete <prefix> --site <id>'

export async function keysCommand(client: AdminClient, out: Output, args: string[], options: KeysOptions): Promise<void> {
  const [action, prefix] = args
  if (!options.site) throw new CliError(`--site is required. ${USAGE}`, 2)
  const base = `/sites/${encodeURIComponent(options.site)}/keys`
  if (action === 'create') {
    if (!options.name) throw new CliError(`--name is required. ${USAGE}`, 2)
    const created = await client.request<KeySummary & { key: string }>('POST', base, { name: options.name })
    // The server's public URL (as the banner and `sites show` say it), not the loopback address the CLI talks to.
    const { base_url: baseUrl = client.url } = await client.request<{ base_url?: string }>('GET', '/status').catch(() => ({ base_url: undefined }))
    out.result(created, () => [
      created.key,
      '',
      `Key "${created.name}" for site ${options.site}. It is shown in full only now: store it in your secret manager.`,
      `Try it: curl -H "x-dc-key: ${created.key}" ${baseUrl.replace(/\/+$/, '')}/api/v1/export/health`,
    ].join('\n'))
    return
  }
  if (action === 'list') {
    const { keys } = await client.request<{ keys: KeySummary[] }>('GET', base)
    out.result(keys, () => keys.length === 0
      ? `Site ${options.site} has no private keys. Create one: dcgate keys create --site ${options.site} --name <name>`
      : table([['PREFIX', 'NAME', 'CREATED', 'LAST USED'], ...keys.map((k) => [k.prefix, k.name, k.created_at, k.last_used_at ?? 'never'])]))
    return
  }
  if (action === 'delete') {
    if (!prefix) throw new CliError(`Give the key's prefix. ${USAGE}`, 2)
    const { deleted } = await client.request<{ deleted: KeySummary }>('DELETE', `${base}/${encodeURIComponent(prefix)}`)
    out.result(deleted, () => `Deleted key ${deleted.prefix} ("${deleted.name}") of site ${options.site}; it is refused from now on.`)
    return
  }
  throw new CliError(USAGE, 2)
}
