import { AsyncLocalStorage } from 'node:async_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { bootDsarApp, publicRequest, seedPerson } from '../dsar/support.ts'

// On Node 20 the first AsyncLocalStorage run turns on promise hooks for the whole process, for good, and every
// promise of every request pays for them afterwards (about a tenth of /collect's CPU in the capture benchmark).
// MikroORM runs one in em.transactional(), em.flush() and em.findAndCount(); core/db/transaction.ts is the way
// around them. This boots the app and drives the routes that write (keys, capture, identification, conversions,
// held conversions, data deletion), and fails if dcgate's code started one.
const started: string[] = []
const original = { run: AsyncLocalStorage.prototype.run, enterWith: AsyncLocalStorage.prototype.enterWith }

function ours(stack: string): boolean {
  return stack.includes('@mikro-orm') || /\/(core|plugins|adapters)\//.test(stack.split('\n').slice(2).join('\n'))
}

let app: TestApp
beforeAll(async () => {
  AsyncLocalStorage.prototype.run = function run(this: AsyncLocalStorage<unknown>, ...args: Parameters<AsyncLocalStorage<unknown>['run']>) {
    const stack = new Error('AsyncLocalStorage.run').stack ?? ''
    if (ours(stack)) started.push(stack)
    return original.run.apply(this, args)
  } as typeof original.run
  AsyncLocalStorage.prototype.enterWith = function enterWith(this: AsyncLocalStorage<unknown>, store: unknown) {
    const stack = new Error('AsyncLocalStorage.enterWith').stack ?? ''
    if (ours(stack)) started.push(stack)
    return original.enterWith.call(this, store)
  }
  app = await bootDsarApp(undefined)
})
afterAll(async () => {
  AsyncLocalStorage.prototype.run = original.run
  AsyncLocalStorage.prototype.enterWith = original.enterWith
  await app?.close()
})

describe('no AsyncLocalStorage on serving paths', () => {
  it('boot, keys, capture, identification, conversions, deletion requests and erasure start none', async () => {
    const key = await app.createKey('shop', 'ci')
    const listed = await app.admin('GET', '/sites/shop/keys')
    expect(listed.status).toBe(200)
    await seedPerson(app, 'shop', { email: 'pat@example.com', phone: '+1 650 253 0000', firstName: 'Pat', lastName: 'Doe' }, key)
    expect((await publicRequest(app, { email: 'pat@example.com', cop_key: app.dcgate.context.sites.byId('shop')!.copKey })).status).toBe(200)
    const erased = await app.request('/api/v1/data-deletion', { method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify({ email: 'pat@example.com' }) })
    expect(erased.status).toBe(200)
    const prefix = key.slice(0, 12)
    expect((await app.admin('DELETE', `/sites/shop/keys/${prefix}`)).status).toBe(200)
    expect(started).toEqual([])
  })
})
