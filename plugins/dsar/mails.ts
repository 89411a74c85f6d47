import type { MailMessage } from '../../core/mail/mailer.ts'
import { escapeHtml } from '../../core/http/escape-html.ts'

/**
 * The confirmation mail: the single-use link to the confirmation page, the confirmation code, the status page.
 * `to` is the canonical address the mail goes to; no name the requester typed appears anywhere.
 */
export function confirmationMail(to: string, siteName: string, confirmUrl: string, statusUrl: string, code: string): MailMessage {
  const subject = `Confirm the deletion of your data at ${siteName}`
  const text = [
    `Someone, hopefully you, asked ${siteName} to delete the personal data it holds about ${to}.`,
    '',
    'To confirm, open this link and press the button on the page (nothing is deleted until you do):',
    confirmUrl,
    '',
    `Confirmation code: ${code}`,
    'Follow the request here at any time:',
    statusUrl,
    '',
    'If you did not ask for this, ignore this message: nothing is deleted without your confirmation.',
  ].join('\n')
  const html = page(subject, `
<p>Someone, hopefully you, asked ${esc(siteName)} to delete the personal data it holds about <strong>${esc(to)}</strong>.</p>
<p><a href="${esc(confirmUrl)}">Open the confirmation page</a> and press its button to delete your data (nothing is deleted until you do).</p>
<p>Confirmation code: <code>${esc(code)}</code><br>Follow the request at any time on its <a href="${esc(statusUrl)}">status page</a>.</p>
<p>If you did not ask for this, ignore this message: nothing is deleted without your confirmation.</p>`)
  return { to, subject, text, html }
}

/** The completion mail, sent once the erasure has run. */
export function completionMail(to: string, siteName: string, statusUrl: string, code: string): MailMessage {
  const subject = `Your data at ${siteName} has been deleted`
  const text = [
    `${siteName} has deleted the personal data it held about ${to}.`,
    '',
    `Confirmation code: ${code}`,
    `Proof of the deletion: ${statusUrl}`,
  ].join('\n')
  const html = page(subject, `
<p>${esc(siteName)} has deleted the personal data it held about <strong>${esc(to)}</strong>.</p>
<p>Confirmation code: <code>${esc(code)}</code><br><a href="${esc(statusUrl)}">Proof of the deletion</a></p>`)
  return { to, subject, text, html }
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body>${body}</body></html>`
}

/** HTML escaping for the mails and the status page. */
export const esc = escapeHtml
