import type { PreparedStatement } from '../../../core/db/prepared.ts'

/** A rare statement (admin, background, a poller's turn): planned on every call, so no plan is kept per connection. */
export function oneOff(text: string, timeoutMs?: number): PreparedStatement {
  return { name: '', text, reusePlan: false, timeoutMs }
}
