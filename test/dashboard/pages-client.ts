/**
 * A browser stand-in for the dashboard's page tests: keeps cookies, signs in as the operator (admin token) or as a
 * member (the emailed link, read from the mail outbox), reads the session's CSRF token from the page and posts forms
 * as a browser does (urlencoded, no JavaScript).
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import type { TestApp } from '../helpers/app.ts'

export interface PageClient {
  get: (path: string) => Promise<{ status: number, text: string }>
  /** Posts a form with the session's CSRF token added (unless `fields` has its own); returns the answer (a 303 back to the page for an action). */
  post: (path: string, fields?: Record<string, string>) => Promise<Response>
  csrf: () => string
}

export async function signInAsOperator(app: TestApp): Promise<PageClient> {
  const client = createClient(app)
  const front = await client.get('/dashboard')
  const response = await client.postRaw('/dashboard/sign-in', { token: app.dcgate.adminToken, csrf: csrfIn(front.text) })
  if (response.status !== 303) throw new Error(`operator sign-in answered ${response.status}`)
  return client.signedIn()
}

/** Asks for a link for `email`, reads it from the outbox under the app's data dir and follows it. */
export async function signInAsMember(app: TestApp, email: string): Promise<PageClient> {
  const client = createClient(app)
  const front = await client.get('/dashboard')
  await client.postRaw('/dashboard/sign-in/email', { email, csrf: csrfIn(front.text) })
  const dir = join(app.dataDir, 'outbox')
  let token: string | undefined
  for (const name of await readdir(dir)) token ??= /token=([\w-]+)/.exec(await readFile(join(dir, name), 'utf8'))?.[1]
  if (!token) throw new Error('no sign-in link in the outbox')
  const page = await client.get(`/dashboard/link?token=${token}`)
  const response = await client.postRaw('/dashboard/link', { token, csrf: csrfIn(page.text) })
  if (response.status !== 303) throw new Error(`member sign-in answered ${response.status}`)
  return client.signedIn()
}

/**
 * A member address of its own per test file and run: with Redis the sign-in link limit (per address, per hour) is
 * shared by every test file and survives the run.
 */
export function memberAddress(): string {
  return `owner-${randomUUID().slice(0, 8)}@other.example`
}

/** The dashboard's options for page tests: sign-ins are counted per IP across files on a shared Redis, so loosen it. */
export const signInLimits = { signInsPerIp: 1000 } as const

function csrfIn(page: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1]
  if (!token) throw new Error('no CSRF field on the page')
  return token
}

function createClient(app: TestApp) {
  const cookies = new Map<string, string>()
  let csrf = ''
  const send = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    if (cookies.size) headers.set('cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '))
    const response = await app.request(path, { ...init, headers, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      const name = pair!.slice(0, at)
      const value = pair!.slice(at + 1)
      if (value) cookies.set(name, value)
      else cookies.delete(name)
    }
    return response
  }
  const get = async (path: string) => {
    const response = await send(path)
    return { status: response.status, text: await response.text() }
  }
  const postRaw = (path: string, fields: Record<string, string>) => send(path, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
  })
  return {
    get,
    postRaw,
    async signedIn(): Promise<PageClient> {
      csrf = csrfIn((await get('/dashboard')).text)
      return { get, post: (path, fields = {}) => postRaw(path, { csrf, ...fields }), csrf: () => csrf }
    },
  }
}
