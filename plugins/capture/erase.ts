import { hashIdentity, isSha256Hex, sha256Hex } from '../../core/identity/hash.ts'
import { normalizeEmail } from '../../core/identity/normalize.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { forgetInDeadLetter } from './store/dead-letter.ts'

/**
 * dsar:erase reaches the capture writer's dead-letter files: rows the database refused are kept there as received
 * (personal data included) until they expire, so the lines that name the person go with the rest of their data.
 */
export function addDeadLetterEraser(ctx: PluginContext, deadLetterDir: string): void {
  ctx.hooks.hook('dsar:erase', ({ siteId, email, emailHash }) => {
    const normalized = normalizeEmail(email) ?? email.trim().toLowerCase()
    const identity = hashIdentity({ email: normalized })
    const texts = [normalized, encodeURIComponent(normalized), sha256Hex(normalized), identity.email, identity.emailGoogle, isSha256Hex(emailHash) ? emailHash : undefined]
    const dropped = forgetInDeadLetter(deadLetterDir, siteId, texts.filter((text): text is string => Boolean(text)))
    if (dropped > 0) ctx.logger.info(`capture: an erasure removed ${dropped} dead-letter line(s)`)
  })
}
