/** The device fingerprint as a chunk of its own (GET /script/device): loaded only once identifiers are allowed. */
import { fingerprint } from './fingerprint.ts'

;(window as any).__dcgate_device = fingerprint
