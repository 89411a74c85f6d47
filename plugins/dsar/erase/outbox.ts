import type { Mailer } from '../../../core/mail/mailer.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import type { EraseRequest } from './person.ts'
import { count } from './tally.ts'

/**
 * The mails dcgate wrote to `<dataDir>/outbox/` for this address (no SMTP server configured) hold the raw address
 * and its links: they are deleted, by the recipient tag in their names (core/mail/outbox.ts). The outbox is one per
 * instance and not per site, so this removes the person's mails from every site of the instance; they are all
 * addressed to the person who asked for the erasure.
 */
export function addOutboxEraser(ctx: PluginContext, mailer: Mailer): void {
  ctx.hooks.hook('dsar:erase', async (request: EraseRequest) => {
    count(request, 'outbox_mails', await mailer.forgetRecipient(request.email))
  })
}
