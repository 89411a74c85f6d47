import type { TestApp } from '../helpers/app.ts'
import { mailedLinks } from '../helpers/outbox.ts'

export { mailedLinks }

export interface Answer { status: number, text: string, headers: Headers }

/**
 * A browser stand-in over app.request: keeps cookies (as Set-Cookie says), sends forms urlencoded, and reads the
 * CSRF token of the last page it saw, as a browser's form would carry it.
 */
export function createBrowser(app: TestApp, ip = uniqueIp()) {
  const jar = new Map<string, string>()
  let lastPage = ''
  const send = async (path: string, init: RequestInit = {}): Promise<Answer> => {
    const headers = new Headers(init.headers)
    if (jar.size) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '))
    headers.set('x-forwarded-for', ip)
    const response = await app.request(path, { ...init, headers, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)]
      if (!value || /max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name)
      else jar.set(name, value)
    }
    const text = await response.text()
    if (response.headers.get('content-type')?.startsWith('text/html')) lastPage = text
    return { status: response.status, text, headers: response.headers }
  }
  return {
    jar,
    get: (path: string) => send(path),
    /** Posts a form; `csrf` is filled in from the last page unless given. */
    post: (path: string, fields: Record<string, string> = {}, extra: Record<string, string> = {}) => send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...extra },
      body: new URLSearchParams({ csrf: csrfOf(lastPage), ...fields }).toString(),
    }),
    async signInAsOperator(token: string): Promise<Answer> {
      await send('/dashboard')
      return this.post('/dashboard/sign-in', { token })
    },
    async signInAsMember(email: string): Promise<Answer> {
      await send('/dashboard')
      const before = (await mailedLinks(app.dataDir, email)).length
      const asked = await this.post('/dashboard/sign-in/email', { email })
      if (asked.status !== 200) return asked
      const link = await waitForLink(app.dataDir, email, before)
      const page = await send(new URL(link).pathname + new URL(link).search)
      if (page.status !== 200) return page
      return this.post('/dashboard/link', { token: new URL(link).searchParams.get('token')! })
    },
  }
}

export type Browser = ReturnType<typeof createBrowser>

/**
 * A client address no other test run used lately: rate-limit counters live in the shared storage, which on Redis
 * outlives the test file (CI's second pass, or a rerun within the window).
 */
export function uniqueIp(): string {
  const octet = () => Math.floor(Math.random() * 254) + 1
  return `100.${64 + Math.floor(Math.random() * 64)}.${octet()}.${octet()}`
}

/** An address no other test run used (the per-address link limit is in the shared storage too). */
export function uniqueEmail(local: string, domain: string): string {
  return `${local}-${Math.random().toString(36).slice(2, 10)}@${domain}`
}

export function csrfOf(page: string): string {
  return /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ''
}

/** The newest link mailed to `email` once more than `before` were, waiting for the mail (sent after the answer). */
export async function waitForLink(dataDir: string, email: string, before = 0, deadlineMs = 10_000): Promise<string> {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    const links = await mailedLinks(dataDir, email)
    if (links.length > before) return links.at(-1)!
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no sign-in link was mailed to ${email}`)
}
