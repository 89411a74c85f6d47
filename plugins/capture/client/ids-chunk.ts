/**
 * What only a visitor who allowed identifiers needs, as a chunk of its own (GET /script/ids): keeping click ids,
 * cleaning what identifyUser is given, the device fingerprint, which requests carry cookies. A visitor still to be
 * asked, or who refused, never loads it.
 */
import { clickIdKeeper } from './click-id-keeper.ts'
import { fingerprint } from './fingerprint.ts'
import { identity } from './hits.ts'
import { credentialsFor } from './transport.ts'

export interface IdsChunk { clickIdKeeper: typeof clickIdKeeper, identity: typeof identity, fingerprint: typeof fingerprint, credentialsFor: typeof credentialsFor }

;(window as any).__dcgate_ids = { clickIdKeeper, identity, fingerprint, credentialsFor } satisfies IdsChunk
