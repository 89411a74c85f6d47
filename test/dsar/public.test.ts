import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { REQUEST_MESSAGE } from '../../plugins/dsar/routes/public-request.ts'
import { startSmtp, type TestSmtp } from './smtp.ts'
import { bootDsarApp, confirmByButton, confirmForm, copKey, pathOf, postConfirm, publicRequest, randomIp, seedPerson, sql } from './support.ts'

// The public deletion request as a person goes through it: the request, the confirmation mail delivered to a real
// SMTP server, the link that runs the erasure once, the status page and the proof, the completion mail.
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

/** A fresh visitor address per request, so the per-IP limit only bites where a test wants it to. */
const nextIp = randomIp

describe('POST /public/data-deletion/request', () => {
  it('mails a confirmation link to the canonical address; its page erases nothing, its button erases the data and lands on the status page, a later click re-runs nothing', async () => {
    const key = await app.createKey('shop')
    const person = { email: 'Pat.Doe@Example.com', phone: '+1 650 253 0000', firstName: 'Patrizia', lastName: 'Doevelaar' }
    const { sessions } = await seedPerson(app, 'shop', person, key)

    const response = await publicRequest(app, { email: '  Pat.Doe@Example.com ', cop_key: copKey(app, 'shop'), pageUrl: 'https://shop.example/privacy?from=footer' }, nextIp())
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, message: REQUEST_MESSAGE })
    expect(response.headers.get('access-control-allow-origin')).toBe('*')

    const [mail] = await smtp.waitFor('pat.doe@example.com')
    expect(mail!.subject).toBe('Confirm the deletion of your data at Shop')
    expect(mail!.from).toBe('privacy@shop.example')
    // One recipient, the canonical address, with no display name.
    expect(mail!.to).toEqual(['pat.doe@example.com'])
    expect(mail!.raw).toMatch(/^To: pat\.doe@example\.com\r?$/m)
    const confirm = mail!.links.find((link) => link.includes('/public/dsar/confirm?token='))!
    const status = mail!.links.find((link) => link.includes('/public/dsar/status/'))!
    expect(confirm).toBeDefined()
    expect(status).toBeDefined()
    const code = decodeURIComponent(status.split('/').pop()!)

    const [recorded] = await sql<Record<string, unknown>>(app, 'select * from deletion_requests where code = $1', [code])
    expect(recorded).toMatchObject({ site_id: 'shop', source: 'public', status: 'received', email: 'pat.doe@example.com', masked_email: 'p***@e***.com', page_url: 'https://shop.example/privacy' })
    // Only the token's hash is stored.
    const token = new URL(confirm).searchParams.get('token')!
    expect(JSON.stringify(recorded)).not.toContain(token)
    expect(new Date(recorded!.hard_purge_at as string).getTime() - new Date(recorded!.received_at as string).getTime()).toBe(30 * 86_400_000)

    const before = await fetchProof(code)
    expect(before).toMatchObject({ status: 'received', maskedEmail: 'p***@e***.com', completed_at: null, completion_email_sent_at: null, session_records_anonymised: 0 })

    // The confirmation code is in the mail and on the page behind the link.
    expect(mail!.decoded).toContain(`Confirmation code: ${code}`)
    // Opening the link (the person, or a mail scanner following it) shows a page with a button and erases nothing.
    for (let open = 0; open < 2; open++) {
      const opened = await app.request(pathOf(confirm))
      expect(opened.status).toBe(200)
      expect(opened.headers.get('content-type')).toContain('text/html')
      expect(opened.headers.get('content-security-policy')).toMatch(/^default-src 'none';.*form-action 'self' http:\/\/localhost:3000;/)
      expect(opened.headers.get('referrer-policy')).toBe('no-referrer')
      const page = await opened.text()
      expect(page).not.toContain('<script')
      expect(page).toContain(code)
      expect(page).toContain('p***@e***.com')
      expect(page).not.toMatch(/pat\.doe/i)
      expect(page).toMatch(/<form method="post" action="\/public\/dsar\/confirm">/)
    }
    expect(await fetchProof(code)).toMatchObject({ status: 'received', completed_at: null })
    expect(await sql(app, `select count(*)::int as n from visits where site_id = 'shop' and session_id = any($1::text[]) and email is not null`, [sessions])).toEqual([{ n: 2 }])

    const click = await confirmByButton(app, confirm)
    expect(click.status).toBe(303)
    expect(click.headers.get('location')).toBe(status)

    const proof = await fetchProof(code)
    expect(proof).toMatchObject({
      status: 'completed', maskedEmail: 'p***@e***.com', completed_at: expect.any(String),
      hard_purge_at: before.hard_purge_at, received_at: before.received_at,
      session_records_anonymised: 2, integrations_affected: 5,
    })
    expect(JSON.stringify(proof)).not.toMatch(/pat\.doe|patrizia|doevelaar/i)
    expect(proof.merchant_log.map((e: { event: string }) => e.event)).toEqual(expect.arrayContaining(['request_received', 'confirmation_email_sent', 'confirmed', 'erasure_started', 'erased', 'erasure_completed']))
    expect(proof.merchant_log.filter((e: { event: string }) => e.event === 'erased').map((e: { detail: string, records: number }) => [e.detail, e.records]).sort()).toEqual([
      ['conversions', 3], ['held_conversions', 1], ['identified_users', 1], ['page_events', 5], ['visits', 2],
    ])
    expect(await sql(app, `select count(*)::int as n from visits where site_id = 'shop' and session_id = any($1::text[]) and email is null and ip_address is null`, [sessions])).toEqual([{ n: 2 }])

    // The completion mail, then the raw email is gone from the request too.
    const [, done] = await smtp.waitFor('pat.doe@example.com', 2)
    expect(done!.subject).toBe('Your data at Shop has been deleted')
    expect(done!.decoded).toContain(code)
    await expect.poll(async () => (await fetchProof(code)).completion_email_sent_at).toEqual(expect.any(String))
    expect(await sql(app, 'select email, email_key is not null as keyed from deletion_requests where code = $1', [code])).toEqual([{ email: null, keyed: true }])

    // A second click shows the status and erases nothing again.
    const log = (await fetchProof(code)).merchant_log.length
    const again = await app.request(pathOf(confirm))
    expect(again.status).toBe(303)
    expect(again.headers.get('location')).toBe(status)
    expect((await fetchProof(code)).merchant_log).toHaveLength(log)
    expect(smtp.to('pat.doe@example.com')).toHaveLength(2)

    // The status page is HTML without scripts, showing the same as the proof.
    const page = await app.request(pathOf(status))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const html = await page.text()
    expect(html).not.toContain('<script')
    expect(html).toContain('Completed: the data has been deleted.')
    expect(html).toContain('p***@e***.com')
    expect(html).toContain(code)
    expect(html).not.toMatch(/pat\.doe/i)
  })

  it('clicks arriving together run the erasure once', async () => {
    await publicRequest(app, { email: 'double.click@example.com', cop_key: copKey(app, 'shop') })
    const [mail] = await smtp.waitFor('double.click@example.com')
    const form = await confirmForm(app, mail!.links.find((link) => link.includes('/public/dsar/confirm?token='))!)
    const clicks = await Promise.all([1, 2, 3].map(() => postConfirm(app, form)))
    expect(clicks.map((r) => r.status)).toEqual([303, 303, 303])
    const code = decodeURIComponent(clicks[0]!.headers.get('location')!.split('/').pop()!)
    const proof = await fetchProof(code)
    expect(proof.status).toBe('completed')
    expect(proof.merchant_log.filter((e: { event: string }) => e.event === 'erasure_started')).toHaveLength(1)
    await smtp.waitFor('double.click@example.com', 2)
  })

  it('a repeat within 24 hours gets the same answer and no mail; another site is its own window', async () => {
    const body = { email: 'repeat@example.com', cop_key: copKey(app, 'shop') }
    const first = await publicRequest(app, body, nextIp())
    await smtp.waitFor('repeat@example.com')
    const second = await publicRequest(app, { ...body, email: 'REPEAT@example.com' }, nextIp())
    expect(second.status).toBe(first.status)
    expect(await second.json()).toEqual(await first.json())
    // Mails go out in order: once a later request's mail has arrived, a second one for the repeat would have too.
    await publicRequest(app, { email: 'barrier@example.com', cop_key: copKey(app, 'shop') }, nextIp())
    await smtp.waitFor('barrier@example.com')
    expect(smtp.to('repeat@example.com')).toHaveLength(1)
    expect(await sql(app, `select count(*)::int as n from deletion_requests where site_id = 'shop' and masked_email = 'r***@e***.com'`)).toEqual([{ n: 1 }])

    expect((await publicRequest(app, { ...body, cop_key: copKey(app, 'other') }, nextIp())).status).toBe(200)
    await smtp.waitFor('repeat@example.com', 2)

    // Once the window has passed, a new request is recorded and mailed.
    await sql(app, `update deletion_requests set received_at = received_at - interval '25 hours' where site_id = 'shop' and masked_email = 'r***@e***.com'`)
    expect((await publicRequest(app, body, nextIp())).status).toBe(200)
    await smtp.waitFor('repeat@example.com', 3)
  })

  it('simultaneous requests for one email record and mail once', async () => {
    const body = { email: 'twice@example.com', cop_key: copKey(app, 'shop') }
    const answers = await Promise.all([publicRequest(app, body, nextIp()), publicRequest(app, body, nextIp()), publicRequest(app, body, nextIp())])
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200])
    expect(await sql(app, `select count(*)::int as n from deletion_requests where masked_email = 't***@e***.com'`)).toEqual([{ n: 1 }])
  })

  it('answers the same whether or not the site holds data of the email', async () => {
    const key = await app.createKey('shop')
    await seedPerson(app, 'shop', { email: 'known@example.com', phone: '+1 650 253 0001', firstName: 'Known', lastName: 'Person' }, key)
    const known = await publicRequest(app, { email: 'known@example.com', cop_key: copKey(app, 'shop') }, nextIp())
    const unknown = await publicRequest(app, { email: 'nobody-here@example.com', cop_key: copKey(app, 'shop') }, nextIp())
    expect(known.status).toBe(unknown.status)
    expect(await known.text()).toBe(await unknown.text())
    expect([...known.headers.keys()].sort()).toEqual([...unknown.headers.keys()].sort())
    // Both get a mail: whether data exists is never looked at before the person confirms.
    await smtp.waitFor('known@example.com')
    await smtp.waitFor('nobody-here@example.com')
  })

  it('400 for an invalid email or a missing or unknown cop_key; 403 when the site switched deletion requests off', async () => {
    const cases: [unknown, number, string][] = [
      [{ email: 'not-an-email', cop_key: copKey(app, 'shop') }, 400, 'Invalid email'],
      [{ cop_key: copKey(app, 'shop') }, 400, 'Invalid email'],
      [{ email: 42, cop_key: copKey(app, 'shop') }, 400, 'Invalid email'],
      [{ email: 'a@example.com' }, 400, 'cop_key: is required'],
      [{ email: 'a@example.com', cop_key: 'cop_unknown_0000000000' }, 400, 'Invalid cop_key'],
      [{ email: 'a@example.com', cop_key: copKey(app, 'closed') }, 403, 'Deletion requests are switched off for this site; contact the site owner'],
    ]
    for (const [body, status, message] of cases) {
      const response = await publicRequest(app, body, nextIp())
      expect(response.status, JSON.stringify(body)).toBe(status)
      expect(await response.json()).toEqual({ success: false, message, ...(message === 'Invalid email' ? { errors: [expect.stringMatching(/^email: must be one email address/)] } : {}) })
    }
    const notJson = await app.request('/public/data-deletion/request', { method: 'POST', headers: { 'x-forwarded-for': nextIp() }, body: '[1]' })
    expect(notJson.status).toBe(400)
    expect(await notJson.json()).toMatchObject({ success: false })
    expect(smtp.to('a@example.com')).toEqual([])
  })

  it('limits requests per IP address (10 an hour), whatever the emails', async () => {
    const ip = randomIp()
    for (let i = 0; i < 10; i++) expect((await publicRequest(app, { email: `limit${i}@example.com`, cop_key: copKey(app, 'shop') }, ip)).status).toBe(200)
    const refused = await publicRequest(app, { email: 'limit10@example.com', cop_key: copKey(app, 'shop') }, ip)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await refused.json()).toEqual({ success: false, message: 'Too many deletion requests from this address; try again later' })
    expect(refused.headers.get('access-control-allow-origin')).toBe('*')
    // Another address is not affected.
    expect((await publicRequest(app, { email: 'limit10@example.com', cop_key: copKey(app, 'shop') }, randomIp())).status).toBe(200)
    await smtp.waitFor('limit10@example.com')
    expect(await sql(app, `select count(*)::int as n from deletion_requests where masked_email like 'l***@e***.com'`)).toEqual([{ n: 11 }])
  })

  it('takes text/plain bodies from the embed and answers a CORS preflight for JSON from any origin', async () => {
    const plain = await app.request('/public/data-deletion/request', {
      method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', 'origin': 'https://help.shop.example', 'x-forwarded-for': nextIp() },
      body: JSON.stringify({ email: 'plain@example.com', cop_key: copKey(app, 'shop') }),
    })
    expect(plain.status).toBe(200)
    await smtp.waitFor('plain@example.com')
    const preflight = await app.request('/public/data-deletion/request', { method: 'OPTIONS', headers: { 'origin': 'https://help.shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type')
  })
})

describe('the links and the proof', () => {
  it('an unknown or mangled confirmation link is a 404 page; an unknown code is 404 on the proof and the status page', async () => {
    for (const path of ['/public/dsar/confirm?token=nope', '/public/dsar/confirm']) {
      const response = await app.request(path)
      expect(response.status).toBe(404)
      expect(await response.text()).toContain('This link is no longer valid')
    }
    const proof = await app.request('/public/dsar/proof/dsr_unknown')
    expect(proof.status).toBe(404)
    expect(await proof.json()).toEqual({ message: 'Unknown confirmation code' })
    expect((await app.request('/public/dsar/status/dsr_unknown')).status).toBe(404)
  })

  it('serves the drop-in form script', async () => {
    const response = await app.request('/dsar-embed.js')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    const source = await response.text()
    expect(source).toContain('/public/data-deletion/request')
    expect(source).toContain('data-cop-key')
  })
})

async function fetchProof(code: string) {
  const response = await app.request(`/public/dsar/proof/${encodeURIComponent(code)}`)
  expect(response.status).toBe(200)
  return await response.json() as Record<string, any>
}
