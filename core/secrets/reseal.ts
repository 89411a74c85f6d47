import type { ConsolaInstance } from 'consola'
import type { Keyring, SealPurpose } from './keyring.ts'

/** One stored secret value: where it is (the additional data it is sealed with), the value, and its name in a log line. */
export interface StoredValue { place: string, value: string, label: string }

/**
 * At start: seals each value stored in clear (written before encryption) or under a previous server secret with the
 * current one, through `write` (which should only replace the value as read). Warns of a value no secret opens.
 * Answers how many were sealed anew.
 */
export async function resealStored<R>(
  keyring: Keyring, purpose: SealPurpose, rows: readonly R[], describe: (row: R) => StoredValue, write: (row: R, sealed: string) => Promise<void>, logger: ConsolaInstance,
): Promise<number> {
  let resealed = 0
  for (const row of rows) {
    const { place, value, label } = describe(row)
    const sealed = keyring.isSealed(value)
    if (sealed && !keyring.isStale(value)) continue
    const plain = sealed ? keyring.open(purpose, value, place) : value
    if (plain === undefined) {
      logger.warn(`${label} does not open with the server secret or a previous one (server.previousSecrets); it is not used`)
      continue
    }
    await write(row, keyring.seal(purpose, plain, place))
    resealed++
  }
  return resealed
}
