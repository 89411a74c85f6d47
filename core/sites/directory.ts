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
  /** `dashboard`: made and edited in the dashboard (core/sites/managed.ts); absent: the config file's, read-only there. */
  origin?: 'dashboard'
}

/**
 * Lookup of the sites: the config file's, built at boot, and the dashboard's, replaced whenever one changes
 * (core/sites/managed.ts). A site in neither is absent. Read it on every use, never keep a copy: it changes live.
 */
export interface SiteDirectory {
  byId: (id: string) => ActiveSite | undefined
  byCopKey: (copKey: string) => ActiveSite | undefined
  list: () => readonly ActiveSite[]
}

/** The directory and the one way to change it, kept by the kernel (core/sites/managed.ts calls `replace`). */
export interface LiveSiteDirectory extends SiteDirectory {
  replace: (sites: readonly ActiveSite[]) => void
}

export function createSiteDirectory(initial: readonly ActiveSite[]): LiveSiteDirectory {
  let sites = initial
  let byId = new Map(sites.map((s) => [s.id, s]))
  let byCopKey = new Map(sites.map((s) => [s.copKey, s]))
  return {
    byId: (id) => byId.get(id),
    byCopKey: (copKey) => byCopKey.get(copKey),
    list: () => sites,
    replace(next) {
      sites = next
      byId = new Map(next.map((s) => [s.id, s]))
      byCopKey = new Map(next.map((s) => [s.copKey, s]))
    },
  }
}
