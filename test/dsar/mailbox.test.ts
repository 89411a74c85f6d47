import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { startSmtp, type TestSmtp } from './smtp.ts'
import { bootDsarApp, confirmForm, copKey, pathOf, postConfirm, publicRequest, randomIp, sql } from './support.ts'

// Issue 15: a deletion request names one mailbox, the mail goes to that mailbox only, and the emailed link
// confirms by a button, never by being opened.
let app: TestApp
let smtp: TestSmtp

beforeAll(async () => {
  smtp = await startSmtp()
  app = await bootDsarApp(smtp)
})
afterAll(async () => {
  await app?.close()
  await smtp?.close()
})

const HOSTILE = [
  'victim@example.com,root',
  'victim@example.com, attacker@evil.example',
  'victim@example.com;root@evil.example',
  '"Your account is suspended, call +1 555 0100" <victim@example.com>',
  'Support Team <victim@example.com>',
  '"victim"@example.com',
  'victim@example.com\r\nBcc: attacker@evil.example',
  'vic tim@example.com',
  'victim@[127.0.0.1]',
  'victim(comment)@example.com',
  `${'v'.repeat(65)}@example.com`,
]

/** Mails go out in order: once a later request's mail has arrived, any earlier one would have too. */
async function barrier(): Promise<void> {
  const address = `barrier-${randomIp().replaceAll('.', '-')}@example.com`
  expect((await publicRequest(app, { email: address, cop_key: copKey(app, 'shop') })).status).toBe(200)
  await smtp.waitFor(address)
}

describe('one mailbox per deletion request', () => {
  it('refuses lists, display names, quoted parts and spaces with 400 naming the email field, and mails nobody', async () => {
    for (const email of HOSTILE) {
      const response = await publicRequest(app, { email, cop_key: copKey(app, 'shop') })
      expect(response.status, email).toBe(400)
      const body = await response.json() as { success: boolean, message: string, errors: string[] }
      expect(body).toEqual({ success: false, message: 'Invalid email', errors: [expect.stringMatching(/^email: /)] })
      expect(JSON.stringify(body)).not.toContain('victim')
    }
    await barrier()
    expect(smtp.messages.filter((m) => m.to.some((to) => /victim|attacker|root/.test(to)))).toEqual([])
    expect(await sql(app, `select count(*)::int as n from deletion_requests where masked_email like 'v***@%' or masked_email like '"***@%' or masked_email like 'S***@%'`)).toEqual([{ n: 0 }])
  })

  it('case, spacing and the punycode spelling of one mailbox are one person for the 24-hour rule; the mail goes to the canonical address', async () => {
    const variants = ['Same.Person@Bücher.example', '  same.person@bücher.example', 'SAME.PERSON@BÜCHER.EXAMPLE\t', 'same.person@xn--bcher-kva.example']
    for (const email of variants) expect((await publicRequest(app, { email, cop_key: copKey(app, 'shop') }, randomIp())).status).toBe(200)
    await barrier()
    const mails = smtp.messages.filter((m) => m.subject.startsWith('Confirm') && m.to.some((to) => to.startsWith('same.person@')))
    expect(mails).toHaveLength(1)
    // The envelope and the To header name exactly the canonical address, no display name; on the wire the domain
    // is punycode (the test server gives envelope domains back in Unicode).
    expect(mails[0]!.to).toEqual(['same.person@bücher.example'])
    expect(mails[0]!.raw).toMatch(/^To: same\.person@xn--bcher-kva\.example\r?$/m)
    expect(await sql(app, `select email from deletion_requests where site_id = 'shop' and email like 'same.person@%'`)).toEqual([{ email: 'same.person@bücher.example' }])
  })

  it('the same for the private route: 400 naming email for a hostile address, and the canonical address is erased', async () => {
    const key = await app.createKey('shop')
    const erase = (email: unknown) => app.request('/api/v1/data-deletion', { method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify({ email }) })
    for (const email of HOSTILE) {
      const response = await erase(email)
      expect(response.status, email).toBe(400)
      expect(await response.json()).toEqual({ success: false, message: 'Invalid email', errors: [expect.stringMatching(/^email: /)] })
    }
    expect((await erase(' Private.Person@Example.COM ')).status).toBe(200)
  })

  it('the same syntax on /identify and in conversion traits: refused naming the field', async () => {
    const identify = await app.request(`/identify?cop_key=${copKey(app, 'shop')}`, {
      method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify({ v: 1, sid: 'sess-mailbox-1', vid: 'visitor-mailbox-1', email: 'victim@example.com,root', via: 'sdk', consent: 'granted' }),
    })
    expect(identify.status).toBe(400)
    expect(JSON.stringify(await identify.json())).toMatch(/email: must be one email address/)

    const key = await app.createKey('shop')
    const convert = (email: string) => app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'Purchase', messageId: `mailbox-${email.length}-${randomIp()}`, context: { traits: { email } } }),
    })
    const refused = await convert('"Support" <victim@example.com>')
    expect(refused.status).toBe(422)
    expect(await refused.json()).toMatchObject({ code: 'INVALID_CONVERSION', errors: [expect.stringMatching(/^context\.traits\.email: must be one email address/)] })
    for (const email of [' Buyer@Example.com ', 'e586883b2b4faf78d48300a79e0e15138d664cdf796ffb86e533170a9893eda8', '']) {
      expect((await convert(email)).status, JSON.stringify(email)).toBeLessThan(300)
    }
  })
})

describe('the emailed link confirms by a button', () => {
  async function requestLink(email: string): Promise<{ confirm: string, code: string }> {
    expect((await publicRequest(app, { email, cop_key: copKey(app, 'shop') })).status).toBe(200)
    const [mail] = await smtp.waitFor(email)
    const status = mail!.links.find((link) => link.includes('/public/dsar/status/'))!
    return { confirm: mail!.links.find((link) => link.includes('/public/dsar/confirm?token='))!, code: decodeURIComponent(status.split('/').pop()!) }
  }
  const state = async (code: string) => (await sql<{ status: string }>(app, 'select status from deletion_requests where code = $1', [code]))[0]!.status

  it('opening the link any number of times erases nothing; a POST needs the token in its form body', async () => {
    const { confirm, code } = await requestLink('button.only@example.com')
    for (let open = 0; open < 3; open++) expect((await app.request(pathOf(confirm))).status).toBe(200)
    expect(await state(code)).toBe('received')

    const token = new URL(confirm).searchParams.get('token')!
    const attempts: [string, RequestInit][] = [
      // The token in the URL only, as a cross-site form or a prefetch would send it.
      [pathOf(confirm), { method: 'POST' }],
      [pathOf(confirm), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }],
      // Not a form.
      ['/public/dsar/confirm', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) }],
      ['/public/dsar/confirm', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `token=${token}` }],
    ]
    for (const [path, init] of attempts) {
      const response = await app.request(path, init)
      expect(response.status, `${init.headers ? JSON.stringify(init.headers) : 'no type'} ${path.includes('token') ? 'token in query' : ''}`).toBe(400)
      expect(await response.text()).toContain('Use the button on the confirmation page')
    }
    const otherLast = token.endsWith('A') ? 'B' : 'A'
    for (const wrong of ['nope', `${token.slice(0, -1)}${otherLast}`, '\u0000'.repeat(20)]) {
      const response = await postConfirm(app, { action: '/public/dsar/confirm', token: wrong })
      expect(response.status).toBe(404)
      expect(await response.text()).toContain('This link is no longer valid')
    }
    expect(await state(code)).toBe('received')

    const pressed = await postConfirm(app, await confirmForm(app, confirm))
    expect(pressed.status).toBe(303)
    expect(pressed.headers.get('location')).toBe(`http://localhost:3000/public/dsar/status/${encodeURIComponent(code)}`)
    expect(await state(code)).toBe('completed')
    // Opened again once done: straight to the status page.
    const reopened = await app.request(pathOf(confirm))
    expect(reopened.status).toBe(303)
  })
})
