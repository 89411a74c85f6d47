import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { createBrowser, mailedLinks, uniqueEmail, uniqueIp } from './support.ts'

// Nobody can lock a member out of sign-in, and the link request does not tell members from strangers. Each test
// uses fresh addresses: the counters live in the shared storage (Redis outlives a run).
const MEMBER = uniqueEmail('member', 'shop.example')
let app: TestApp

beforeAll(async () => {
  app = await bootTestApp({
    server: { trustProxy: true },
    dashboard: { signInsPerIp: 100, linksPerEmail: 3, linksPerEmailPerDay: 6 },
    sites: [{ id: 'demo', name: 'Demo shop', members: [MEMBER] }],
  })
})
afterAll(() => app?.close())

async function askForLink(email: string, ip = uniqueIp()): Promise<number> {
  const browser = createBrowser(app, ip)
  await browser.get('/dashboard')
  return (await browser.post('/dashboard/sign-in/email', { email })).status
}

/** The distinct links mailed to `email`, once `count` of them arrived (or 5 s passed): mail goes out after the answer. */
async function waitForLinks(email: string, count: number): Promise<Set<string>> {
  const links = async () => new Set(await mailedLinks(app.dataDir, email))
  const until = Date.now() + 5_000
  while ((await links()).size < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50))
  return links()
}

describe('sign-in link limits', () => {
  it('a stranger asking for a member\'s address until refused does not stop the member asking from their own network', async () => {
    const attacker = uniqueIp()
    for (let i = 0; i < 3; i++) expect(await askForLink(MEMBER, attacker)).toBe(200)
    expect(await askForLink(MEMBER, attacker)).toBe(429)
    expect(await askForLink(MEMBER)).toBe(200)
    expect((await waitForLinks(MEMBER, 4)).size).toBe(4)
  })

  it('caps link requests for one address per day, from any number of networks', async () => {
    const address = uniqueEmail('daily', 'shop.example')
    const statuses = []
    for (let i = 0; i < 8; i++) statuses.push(await askForLink(address))
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429])
  })

  it('30 requests at once from one network for a member send 3 links', async () => {
    const address = uniqueEmail('parallel', 'shop.example')
    const other = await bootTestApp({ server: { trustProxy: true }, dashboard: { signInsPerIp: 100 }, sites: [{ id: 'demo', name: 'Demo shop', members: [address] }] })
    try {
      const ip = uniqueIp()
      const same = Array.from({ length: 30 }, () => createBrowser(other, ip))
      for (const browser of same) await browser.get('/dashboard')
      const statuses = await Promise.all(same.map(async (browser) => (await browser.post('/dashboard/sign-in/email', { email: address })).status))
      expect(statuses.filter((status) => status === 200)).toHaveLength(3)
      expect(statuses.filter((status) => status === 429)).toHaveLength(27)
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(new Set(await mailedLinks(other.dataDir, address)).size).toBe(3)
    }
    finally {
      await other.close()
    }
  })
})

describe('admin token sign-in limit', () => {
  it('30 wrong tokens at once from one address: 10 answers of 401, the rest 429', async () => {
    const limited = await bootTestApp({ server: { trustProxy: true }, dashboard: { signInsPerIp: 10 } })
    try {
      const ip = uniqueIp()
      const browsers = Array.from({ length: 30 }, () => createBrowser(limited, ip))
      for (const browser of browsers) await browser.get('/dashboard')
      const statuses = await Promise.all(browsers.map(async (browser) => (await browser.post('/dashboard/sign-in', { token: 'wrong-token-guess' })).status))
      expect(statuses.filter((status) => status === 401)).toHaveLength(10)
      expect(statuses.filter((status) => status === 429)).toHaveLength(20)
    }
    finally {
      await limited.close()
    }
  })
})

describe('the link request takes the same time for members and strangers', () => {
  it('does not wait for a mail server that never answers', async () => {
    // Accepts the connection and says nothing: nodemailer waits for the greeting (10 s) before giving up.
    const sockets: Socket[] = []
    const silent = createServer((socket) => void sockets.push(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const member = uniqueEmail('slow', 'shop.example')
    const slowMail = await bootTestApp({
      server: { trustProxy: true },
      mail: { smtp: `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`, from: 'dcgate@shop.example' },
      sites: [{ id: 'demo', name: 'Demo shop', members: [member] }],
    })
    try {
      const timed = async (email: string) => {
        const browser = createBrowser(slowMail)
        await browser.get('/dashboard')
        const started = performance.now()
        expect((await browser.post('/dashboard/sign-in/email', { email })).status).toBe(200)
        return performance.now() - started
      }
      const stranger = await timed(uniqueEmail('stranger', 'evil.example'))
      const asMember = await timed(member)
      // Waiting for the mail would take the 10 s greeting timeout; both answers come at once.
      expect(asMember).toBeLessThan(1_000)
      expect(asMember).toBeLessThan(stranger + 500)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(sockets.length).toBe(1) // the mail was being sent meanwhile
    }
    finally {
      for (const socket of sockets) socket.destroy()
      silent.close()
      await slowMail.close()
    }
  })
})
