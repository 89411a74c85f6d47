import type { BotSignals } from './protocol.ts'
import type { VisitVerdict } from './hits.ts'

/** The part of plugins/capture/intel the routes use. */
export interface VisitIntel {
  classify: (input: { ip?: string, userAgent?: string, signals?: BotSignals }) => VisitVerdict
  requiresConsent: (country: string | undefined) => boolean
}
