import type { H3Event } from 'h3'
import { canonicalEmail } from '../../../core/identity/email.ts'
import { maskEmail } from '../../../core/mail/mask.ts'
import { isMember } from '../access.ts'
import { formToken, formTokenMatches, sameSecret } from '../csrf.ts'
import { ipSubject, overLimit } from '../rate-limit.ts'
import { readForm, redirect, sendPage, sendProblem } from '../respond.ts'
import type { Dashboard } from '../service.ts'
import { cameOverHttps } from '../session.ts'
import { linkPage, linkSentPage, signInPage } from '../sign-in-views.ts'

const tags = ['Dashboard']
const IP_WINDOW_SECONDS = 15 * 60
const EMAIL_WINDOW_SECONDS = 3600
const EMAIL_DAY_SECONDS = 24 * 3600

/**
 * Sign-in and sign-out. The operator posts the admin token; a member asks for a link, which is mailed only when the
 * address is in some site's `members`. The answer is the same either way, and as quick: the mail goes out after it.
 * Both forms are rate-limited per IP (shared counter); link requests also per address and requester (so a stranger
 * cannot use up a member's requests) and per address and day (a bound on mail to one inbox). Neither the token nor
 * an address is ever logged.
 */
export function addSignInRoutes(dashboard: Dashboard, renderHome: (event: H3Event) => Promise<string | null>): void {
  const { ctx, options, sessions, links } = dashboard
  const secure = (event: H3Event) => cameOverHttps(event, ctx.config.server.trustProxy)
  const front = (event: H3Event, status: number, message?: string) => sendPage(event, status, signInPage({
    csrf: formToken(event, secure(event)), message, linkMinutes: options.linkMinutes,
  }))
  /** A signed-out form: read, CSRF-checked, counted against the IP's sign-in budget; or the answer refusing it. */
  const signedOutForm = async (event: H3Event) => {
    const read = await readForm(event)
    if ('problem' in read) return { answer: sendProblem(event, read.status, 'Not accepted', read.problem) }
    if (!formTokenMatches(event, read.form)) return { answer: front(event, 403, 'This form expired. Please try again.') }
    const wait = await overLimit(ctx.storage, 'sign-in-ip', ipSubject(dashboard.ip(event)), options.signInsPerIp, IP_WINDOW_SECONDS)
    if (wait) return { answer: tooMany(event, wait) }
    return { form: read.form }
  }

  ctx.routes.add({
    method: 'GET', path: '/dashboard', auth: 'none', tags, summary: 'The dashboard: sign-in, or the list of sites when signed in',
    handler: async (event) => (await renderHome(event)) ?? front(event, 200),
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/sign-in', auth: 'none', tags, summary: 'Sign in with the admin token (form field `token`)',
    handler: async (event) => {
      const { form, answer } = await signedOutForm(event)
      if (!form) return answer
      if (!sameSecret(form.get('token'), dashboard.adminToken)) {
        ctx.logger.warn('a dashboard sign-in gave a wrong admin token')
        return front(event, 401, 'That is not the admin token.')
      }
      const session = await sessions.start(event, { kind: 'operator', label: 'operator' })
      await dashboard.audit(session.viewer, null, 'signed in', 'admin token')
      return redirect(event, '/dashboard')
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/sign-in/email', auth: 'none', tags, summary: 'Ask for a one-time sign-in link (form field `email`)',
    handler: async (event) => {
      const { form, answer } = await signedOutForm(event)
      if (!form) return answer
      const email = canonicalEmail(form.get('email'))
      if (!email) return front(event, 400, 'Enter one email address, such as owner@shop.example.')
      const requester = ipSubject(dashboard.ip(event))
      const wait = await overLimit(ctx.storage, 'link-email-requester', `${email} ${requester}`, options.linksPerEmail, EMAIL_WINDOW_SECONDS)
        ?? await overLimit(ctx.storage, 'link-email-day', email, options.linksPerEmailPerDay, EMAIL_DAY_SECONDS)
      if (wait) return tooMany(event, wait)
      // Not awaited: a member's answer must not take the SMTP round trip a stranger's does not (it would tell them apart).
      if (isMember(email, ctx.sites)) void sendLink(dashboard, email)
      return sendPage(event, 200, linkSentPage(options.linkMinutes))
    },
  })

  ctx.routes.add({
    method: 'GET', path: '/dashboard/link', auth: 'none', tags, summary: 'The page behind an emailed sign-in link (opening it signs nobody in)',
    handler: async (event) => {
      const token = event.url.searchParams.get('token')
      const email = await links.peek(token)
      if (!email) return invalidLink(event)
      return sendPage(event, 200, linkPage({ csrf: formToken(event, secure(event)), token: token!, maskedEmail: maskEmail(email) }))
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/link', auth: 'none', tags, summary: 'Sign in with an emailed link (form field `token`); works once',
    handler: async (event) => {
      const { form, answer } = await signedOutForm(event)
      if (!form) return answer
      const email = await links.use(form.get('token'))
      if (!email) return invalidLink(event)
      const session = await sessions.start(event, { kind: 'member', email, label: email })
      await dashboard.audit(session.viewer, null, 'signed in', 'emailed link')
      return redirect(event, '/dashboard')
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/sign-out', auth: 'none', tags, summary: 'Sign out',
    handler: async (event) => {
      const current = await sessions.read(event)
      const read = await readForm(event)
      if (!current) return redirect(event, '/dashboard')
      if ('problem' in read) return sendProblem(event, read.status, 'Not accepted', read.problem)
      if (!sameSecret(read.form.get('csrf'), current.session.csrf)) return sendProblem(event, 403, 'Not accepted', 'This form expired. Reload the page and try again.')
      await sessions.end(event)
      await dashboard.audit(current.session.viewer, null, 'signed out')
      return redirect(event, '/dashboard')
    },
  })
}

/** Issues and mails a link, after the answer; a failure is reported, never thrown. */
async function sendLink(dashboard: Dashboard, email: string): Promise<void> {
  try {
    const token = await dashboard.links.issue(email)
    const url = `${dashboard.baseUrl}/dashboard/link?token=${token}`
    await dashboard.mailer.send({
      to: email,
      subject: 'Your dcgate sign-in link',
      text: `Open this link to sign in to the dcgate dashboard:\n\n${url}\n\nIt works once, for ${dashboard.options.linkMinutes} minutes. If you did not ask for it, ignore this mail.\n`,
    })
    await dashboard.audit(email, null, 'sign-in link sent')
  }
  catch (error) {
    dashboard.ctx.report(error, { source: 'dashboard:sign-in-link' })
  }
}

function tooMany(event: H3Event, wait: number): string {
  event.res.headers.set('retry-after', String(wait))
  return sendProblem(event, 429, 'Too many attempts', `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60)} minutes.`)
}

function invalidLink(event: H3Event): string {
  return sendProblem(event, 400, 'This link no longer works', 'Sign-in links work once, for a short time. Ask for a new one.')
}
