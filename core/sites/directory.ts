import type { SiteConfig } from '../config/schema.ts'

/** A site that is in the config now: its stored keys plus its config. */
export interface ActiveSite {
  id: string
  name: string
  copKey: string
  releaseSecret: string
  status: 'active' | 'paused'
  plan: 'free' | 'business' | 'organization'
  config: SiteConfig
}

/** In-memory lookup of the configured sites, built once at boot; a site not in the config is absent. */
export interface SiteDirectory {
  byId: (id: string) => ActiveSite | undefined
  byCopKey: (copKey: string) => ActiveSite | undefined
  list: () => readonly ActiveSite[]
}

export function createSiteDirectory(sites: readonly ActiveSite[]): SiteDirectory {
  const byId = new Map(sites.map((s) => [s.id, s]))
  const byCopKey = new Map(sites.map((s) => [s.copKey, s]))
  return {
    byId: (id) => byId.get(id),
    byCopKey: (copKey) => byCopKey.get(copKey),
    list: () => sites,
  }
}
