/**
 * `dcgate data update`: download fresh Tor exit, cloud and relay lists from their official feeds into
 * <dataDir>/intel/, where createVisitIntel prefers them over the vendored snapshots (when at least as new).
 * A running server picks them up at its next start. Each feed is independent: one that fails (network, HTTP
 * error, unreadable or empty answer) keeps its previous file and is reported, the others are still written.
 *
 *   const results = await updateVisitData({ dataDir, fetch: globalThis.fetch, logger })
 */
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import ipaddr from 'ipaddr.js'
import { formatList } from './lists.ts'
import { SOURCES, type Fetch, type IntelSource } from './sources.ts'
import type { IntelLogger } from './types.ts'
import type { DataUpdateResult } from '../../../core/cli/commands/data.ts'

export interface UpdateOptions {
  dataDir: string
  /** globalThis.fetch in production; tests pass one that sends every request to a local fake server. */
  fetch: Fetch
  logger: IntelLogger
  /** Only these list names (e.g. ['tor-exits']); all by default. */
  only?: readonly string[]
  /** Per request; the Azure and iCloud files are several MB. */
  timeoutMs?: number
  /** For the header's `retrieved` line and the default date. */
  now?: () => Date
  /** The feeds; SOURCES by default. */
  sources?: readonly IntelSource[]
}

/** One list's outcome, in the shape the CLI's `dcgate data update` prints (declared there, in core). */
export type UpdateResult = DataUpdateResult

function isAddressOrBlock(entry: string): boolean {
  return entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry)
}

function getter(fetch: Fetch, timeoutMs: number): (url: string) => Promise<string> {
  return async (url) => {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { 'user-agent': 'dcgate-data-update' } })
    if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`)
    return response.text()
  }
}

async function updateOne(source: IntelSource, dir: string, get: (url: string) => Promise<string>, now: Date): Promise<UpdateResult> {
  const feed = await source.read(get)
  const entries = [...new Set(feed.entries.map((e) => e.trim()).filter(isAddressOrBlock))]
  const skipped = feed.entries.length - entries.length
  if (entries.length === 0) throw new Error(`no address in the answer of ${feed.urls.join(', ')}`)
  const header = {
    name: source.name,
    label: source.label,
    source: feed.urls.join(' + '),
    date: feed.date ?? now.toISOString().slice(0, 10),
    retrieved: now.toISOString(),
  }
  const path = join(dir, `${source.name}.txt`)
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, formatList(header, entries))
  await rename(temporary, path) // a reader never sees half a file
  return { name: source.name, ok: true, entries: entries.length, skipped, path }
}

export async function updateVisitData(options: UpdateOptions): Promise<UpdateResult[]> {
  const dir = join(options.dataDir, 'intel')
  await mkdir(dir, { recursive: true })
  const get = getter(options.fetch, options.timeoutMs ?? 60_000)
  const now = (options.now ?? (() => new Date()))()
  const sources = (options.sources ?? SOURCES).filter((s) => !options.only || options.only.includes(s.name))

  const results = await Promise.all(sources.map(async (source): Promise<UpdateResult> => {
    try {
      const result = await updateOne(source, dir, get, now)
      options.logger.info(`data update: ${source.name}: ${result.entries} entries → ${result.path}`)
      return result
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      options.logger.warn(`data update: ${source.name} not updated (the previous list stays): ${message}`)
      return { name: source.name, ok: false, error: message }
    }
  }))
  return results
}
