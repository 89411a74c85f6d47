import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedactedDatabaseError } from '../../core/db/loggable-error.ts'
import { DatabaseTimeoutError } from '../../core/db/timeouts.ts'
import { isTransientDatabaseError } from '../../core/db/transient.ts'
import { bootTestApp, postPurchase, type TestApp } from '../helpers/app.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from './test-platform.ts'

// An inline attempt's record that fails: for a deadlock with another instance's record (or a lost connection) it is
// run again, so the platform gets the conversion once; for anything else it is not, and the deliveries are sent again
// when the lease runs out (the platform drops the repeat by its event id), so nothing is lost either way.
const LEASE_SECONDS = 2

let app: TestApp
let fake: FakeServer
let key: string
beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 100, leaseSeconds: LEASE_SECONDS },
    sites: [{ id: 'demo', name: 'Demo', destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }, { adapters: [testPlatform] })
  key = await app.createKey()
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = (text: string) => app.dcgate.database.orm.em.getConnection().execute(text)

/** The next row inserted into deliveries (the record's, here) fails once with `code`; later ones go through. */
async function failNextDeliveryInsert(code: string): Promise<void> {
  await sql(`drop trigger if exists record_fault on deliveries; drop sequence if exists record_fault;
    create sequence record_fault;
    create or replace function record_fault() returns trigger language plpgsql as $fault$
    begin
      if nextval('record_fault') = 1 then raise exception 'injected by the test' using errcode = '${code}'; end if;
      return new;
    end $fault$;
    create trigger record_fault before insert on deliveries for each row execute function record_fault();`)
}

const conversion = (messageId: string) => postPurchase(app, key, messageId)
const sentTimes = (messageId: string) => fake.requests
  .flatMap((request) => (JSON.parse(request.body) as { events: { id: string }[] }).events)
  .filter((event) => event.id === messageId).length
const rows = (messageId: string) => app.dcgate.database.orm.em.getConnection().execute<{ status: string, attempts: number }[]>(
  `select d.status, d.attempts from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ?`, [messageId])
const heldUntil = async (messageId: string) => (await app.dcgate.database.orm.em.getConnection().execute<{ inline_until: string | null }[]>(
  'select inline_until from conversions where message_id = ?', [messageId]))[0]?.inline_until

/** Polls until `check` holds (the worker runs every 100 ms; the lease is 2 s), or fails the test after 20 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('a failed record of an inline attempt', () => {
  it('is run again after a deadlock: the platform gets the conversion once, and its row ends sent', async () => {
    await failNextDeliveryInsert('40P01')
    expect((await conversion('record-deadlock')).status).toBe(202)
    // Once its row is sent and the conversion holds nothing, no sweep or worker will send it again.
    await until(async () => (await rows('record-deadlock'))[0]?.status === 'sent' && await heldUntil('record-deadlock') === null, 'the delivery is recorded')
    expect(sentTimes('record-deadlock')).toBe(1)
    expect(await rows('record-deadlock')).toEqual([{ status: 'sent', attempts: 1 }])
  })

  it('is not run again for an error in what it writes; the lease\'s end sends the delivery again, nothing lost', async () => {
    await failNextDeliveryInsert('22023')
    expect((await conversion('record-refused')).status).toBe(202)
    await until(async () => (await rows('record-refused'))[0]?.status === 'sent', 'the delivery is sent again and recorded')
    expect(sentTimes('record-refused')).toBe(2)
    expect(await rows('record-refused')).toEqual([{ status: 'sent', attempts: 2 }])
  })
})

describe('isTransientDatabaseError', () => {
  it('names the failures after which the same statement may succeed, and no others', () => {
    const withCode = (code: string) => Object.assign(new Error('x'), { code })
    for (const error of [withCode('40P01'), withCode('40001'), withCode('08006'), withCode('57P01'), withCode('53300'), withCode('ECONNRESET'),
      new RedactedDatabaseError(withCode('40P01')), new DatabaseTimeoutError('no answer'), new Error('Connection terminated unexpectedly'),
      new Error('Knex: Timeout acquiring a connection. The pool is probably full.')]) {
      expect(isTransientDatabaseError(error), String((error as { code?: string }).code ?? error.message)).toBe(true)
    }
    for (const error of [withCode('23505'), withCode('22P02'), withCode('22023'), withCode('42P01'), new TypeError('x is undefined'), 'a string', undefined]) {
      expect(isTransientDatabaseError(error)).toBe(false)
    }
  })
})
