import type { ResolvedConfig } from '../../config/schema.ts'
import { CliError, type Output } from '../output.ts'

/** One downloaded list, as the updater reports it. */
export interface DataUpdateResult {
  name: string
  ok: boolean
  /** Addresses and blocks written. */
  entries?: number
  /** Lines of the feed that were not an address or block, and were left out. */
  skipped?: number
  path?: string
  /** Why the list was not updated. */
  error?: string
}

/**
 * Downloads the lists into `<dataDir>/intel/`. The capture plugin owns them, so the entry point (dcgate.ts) hands the
 * CLI its updater; the kernel does not import the plugin.
 */
export type UpdateData = (options: {
  dataDir: string
  fetch: typeof fetch
  logger: { info: (message: string) => void, warn: (message: string) => void }
  only?: readonly string[]
}) => Promise<DataUpdateResult[]>

/**
 * `dcgate data update [--only tor-exits,cloud-aws]`: downloads fresh Tor exit and cloud provider lists into
 * `<dataDir>/intel/` (needs the network). A running server reads them at its next start.
 */
export async function dataCommand(config: ResolvedConfig, out: Output, args: readonly string[], options: { only?: string }, update?: UpdateData): Promise<void> {
  if (args[0] !== 'update') throw new CliError('Usage: dcgate data update [--only name,name] [--json]', 2)
  if (!update) throw new CliError('This build of dcgate has no visit data to update (the capture plugin is not part of it)')
  const quiet = { info: () => {}, warn: (message: string) => process.stderr.write(`${message}\n`) }
  const results = await update({ dataDir: config.dataDir, fetch: globalThis.fetch, logger: quiet, only: options.only?.split(',').map((s) => s.trim()).filter(Boolean) })
  out.result(results, () => results.map((r) => r.ok
    ? `${r.name.padEnd(18)} updated: ${r.entries} entries${r.skipped ? ` (${r.skipped} lines skipped)` : ''} → ${r.path}`
    : `${r.name.padEnd(18)} not updated: ${r.error}`).join('\n') + '\nRestart dcgate to use the new lists.')
  if (results.length > 0 && results.every((r) => !r.ok)) throw new CliError('No list could be updated')
}
