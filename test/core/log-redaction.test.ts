import { inspect } from 'node:util'
import { createConsola, type LogObject } from 'consola'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { definePlugin, type PluginContext } from '../../core/plugin.ts'

// Database errors carry the row they failed on (knex puts the statement with its values in the message,
// node-postgres the key values in `detail`). Whatever path logs them, the log and the `error` hook get the error
// class, the SQLSTATE code and the constraint, never the email, its hash, the statement or a parameter.
const EMAIL = 'ann.secret@example.com'
const HASH = 'a'.repeat(64)
const INSERT = 'insert into identified_users (id, site_id, email, email_hash, source) values (gen_random_uuid(), ?, ?, ?, ?)'

let app: TestApp
let ctx: PluginContext
const lines: string[] = []
const hooked: unknown[] = []

beforeAll(async () => {
  const logger = createConsola({ level: 5 })
  // Everything a reporter is handed, printed the way a JSON or pretty reporter would go through it (own props too).
  logger.setReporters([{ log: (entry: LogObject) => void lines.push(inspect(entry.args, { depth: 8, showHidden: false })) }])
  const probe = definePlugin({
    name: 'probe',
    setup(context) {
      ctx = context
      context.hooks.hook('error', (error) => void hooked.push(error))
      // A route whose insert fails, as a plugin's would: the app's error handler reports it.
      context.app.post('/probe/duplicate', async () => {
        await context.orm.em.getConnection().execute(INSERT, ['demo', EMAIL, HASH, 'form'])
        return 'stored'
      })
    },
  })
  app = await bootTestApp({ plugins: [probe] }, { logger })
  await ctx.orm.em.getConnection().execute(INSERT, ['demo', EMAIL, HASH, 'form'])
})
afterAll(async () => {
  await app?.close()
})

function expectNothingPersonal(text: string) {
  expect(text).not.toContain(EMAIL)
  expect(text).not.toContain('ann.secret')
  expect(text).not.toContain(HASH)
  expect(text).not.toMatch(/insert into/i)
  expect(text).not.toContain('Key (')
}

describe('logs and the error hook hold no personal data from database errors', () => {
  it('a unique violation in a route: 500, logged with its class, code and constraint only', async () => {
    lines.length = 0
    hooked.length = 0
    const response = await app.request('/probe/duplicate', { method: 'POST' })
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ message: 'Internal server error' })
    const logged = lines.join('\n')
    expect(logged).toMatch(/UniqueConstraintViolationException|DatabaseError/)
    expect(logged).toContain('23505')
    expect(logged).toContain('identified_users_site_id_email_hash_unique')
    expectNothingPersonal(logged)
    expect(hooked).toHaveLength(1)
    expectNothingPersonal(inspect(hooked, { depth: 8 }))
  })

  it('a plugin logging a driver error itself (prepared statement, node-postgres DatabaseError with detail)', async () => {
    lines.length = 0
    const text = 'insert into identified_users (id, site_id, email, email_hash, source) values (gen_random_uuid(), $1, $2, $3, $4)'
    const error = await ctx.prepared({ name: '', text, reusePlan: false }, ['demo', EMAIL, HASH, 'form']).then(() => undefined, (e: unknown) => e)
    expect(inspect(error)).toContain('Key (') // the raw error carries the key values
    ctx.logger.error('probe: the insert failed', error)
    ctx.logger.withTag('probe').warn(`probe: failed: ${(error as Error).message}`)
    const logged = lines.join('\n')
    expect(logged).toContain('23505')
    expectNothingPersonal(logged)
  })

  it('a statement quoted in a message string loses the statement', async () => {
    lines.length = 0
    const error = await ctx.orm.em.getConnection().execute(INSERT, ['demo', EMAIL, HASH, 'form']).then(() => undefined, (e: unknown) => e)
    expect((error as Error).message).toContain(EMAIL) // as MikroORM and knex hand it over
    ctx.logger.warn(`release: a poll failed: ${(error as Error).message}`)
    await ctx.hooks.callHook('error', error, { source: 'probe' })
    expectNothingPersonal(lines.join('\n'))
    expectNothingPersonal(inspect(hooked.at(-1), { depth: 8 }))
  })
})
