import { resolveConfig } from '../../core/config/load.ts'
import type { BootError } from '../../core/errors.ts'

/** The config loader's messages for one site, without the `sites[0].` their paths start with in a config file. */
export function loaderMessage(site: Record<string, unknown>): string[] {
  try {
    resolveConfig({ sites: [site] })
  }
  catch (error) {
    return (error as BootError).details.map((line) => line.replace(/^sites\[0\]\./, ''))
  }
  throw new Error('the loader accepted it')
}
