/**
 * The plain-text lists under ./data (vendored snapshots) and <dataDir>/intel (written by `dcgate data update`).
 *
 *   # name: cloud-aws                     header lines: "# key: value"
 *   # source: https://ip-ranges.amazonaws.com/ip-ranges.json
 *   # date: 2026-11-21                    when the data was published, as far as known (YYYY-MM-DD)
 *   # retrieved: 2026-11-21T08:00:00Z     when it was copied or downloaded
 *   3.0.0.0/15                            one address, CIDR block or ASN per line; text after a space is a comment
 *
 * The file name says what a list means: tor-*.txt → isTor, cloud-*.txt → isHosting, vpn-*.txt → isVpn,
 * proxy-*.txt → isProxy, and *-asns.txt hold AS numbers ("24940 Hetzner Online GmbH").
 * For each name, the updated copy wins when it was retrieved at or after the vendored one (`retrieved`, else `date`).
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const VENDORED_DIR = fileURLToPath(new URL('./data/', import.meta.url))

export type ListKind = 'tor' | 'hosting' | 'vpn' | 'proxy' | 'hosting-asns' | 'vpn-asns'

export interface ListFile {
  name: string
  kind: ListKind
  header: Record<string, string>
  entries: string[]
  origin: 'vendored' | 'updated'
  path: string
}

export function kindOf(name: string): ListKind | undefined {
  if (name === 'hosting-asns') return 'hosting-asns'
  if (name === 'vpn-asns') return 'vpn-asns'
  if (name.startsWith('tor-')) return 'tor'
  if (name.startsWith('cloud-')) return 'hosting'
  if (name.startsWith('vpn-')) return 'vpn'
  if (name.startsWith('proxy-')) return 'proxy'
  return undefined
}

export function parseList(text: string): { header: Record<string, string>, entries: string[] } {
  const header: Record<string, string> = {}
  const entries: string[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (!line) continue
    if (line.startsWith('#')) {
      const match = /^#\s*([a-z-]+):\s*(.*)$/.exec(line)
      if (match && !(match[1]! in header)) header[match[1]!] = match[2]!
      continue
    }
    const space = line.search(/\s/)
    entries.push(space < 0 ? line : line.slice(0, space))
  }
  return { header, entries }
}

export function formatList(header: Record<string, string>, entries: readonly string[]): string {
  const lines = Object.entries(header).map(([key, value]) => `# ${key}: ${value}`)
  return `${lines.join('\n')}\n${entries.join('\n')}\n`
}

async function readDir(dir: string, origin: ListFile['origin']): Promise<ListFile[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return [] // no <dataDir>/intel yet: nothing was updated
  }
  const lists: ListFile[] = []
  for (const file of names.sort()) {
    if (!file.endsWith('.txt')) continue
    const name = file.slice(0, -4)
    const kind = kindOf(name)
    if (!kind) continue
    const path = join(dir, file)
    const { header, entries } = parseList(await readFile(path, 'utf8'))
    lists.push({ name, kind, header, entries, origin, path })
  }
  return lists
}

function retrievedAt(list: ListFile): string {
  return list.header.retrieved ?? list.header.date ?? ''
}

/** Every list, one per name: the updated copy when present and not older than the vendored one. */
export async function loadLists(dataDir: string, vendoredDir = VENDORED_DIR): Promise<ListFile[]> {
  const [vendored, updated] = await Promise.all([readDir(vendoredDir, 'vendored'), readDir(join(dataDir, 'intel'), 'updated')])
  const chosen = new Map(vendored.map((list) => [list.name, list]))
  for (const list of updated) {
    const current = chosen.get(list.name)
    const newer = !current || retrievedAt(list) >= retrievedAt(current)
    if (newer && list.entries.length > 0) chosen.set(list.name, list)
  }
  return [...chosen.values()]
}
