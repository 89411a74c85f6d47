import { afterEach, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import pipedrive, { pipedriveOptions, type PipedriveOptions } from '../../adapters/crm/pipedrive/index.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from '../../adapters/crm/shared/errors.ts'
import { CONTRACT_NOW, pollContext, testCrmPoller, type ContractCrm } from '../contract/crm-poller.ts'
import { pipedriveErrors, startFakePipedrive, type FakePipedrive } from '../fakes/pipedrive.ts'

const poller = pipedrive
const TOKEN = '659c9fddb16335e48cc67114694b52074e812e03'
const BAD_TOKEN = '0000aaaabbbbccccddddeeeeffff000011112222'
const QUALIFIED_STAGE = 3
const FIELD = 'd0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70819203'
const QUALIFIED_OPTION = 42

/** Deal mode: a lead is a person with a deal; qualified when the deal is in stage 3. */
async function dealCrm(): Promise<ContractCrm> {
  const fake = await startFakePipedrive()
  return {
    ...controls(fake),
    addLead: (email, at, qualified) => String(fake.addDeal({ personId: fake.addPerson({ email, at }), stageId: qualified ? QUALIFIED_STAGE : 1, at })),
    qualify: (id, at) => fake.moveDeal(Number(id), QUALIFIED_STAGE, at),
  }
}

/** Person-field mode: qualified when the person's "Lead status" option is 42. */
async function personCrm(): Promise<ContractCrm> {
  const fake = await startFakePipedrive()
  return {
    ...controls(fake),
    addLead: (email, at, qualified) => String(fake.addPerson({ email, at, customFields: { [FIELD]: qualified ? QUALIFIED_OPTION : 41 } })),
    qualify: (id, at) => fake.updatePerson(Number(id), { customFields: { [FIELD]: QUALIFIED_OPTION } }, at),
  }
}

function controls(fake: FakePipedrive) {
  return { url: fake.url, throttleNext: fake.throttleNext, delay: fake.delay, dataRequests: () => fake.lists.length, queue: fake.queue, requests: () => fake.requests, close: fake.close }
}

const dealConfig = (url: string) => ({ apiToken: TOKEN, eventName: 'demo_booked', dealStageIds: [QUALIFIED_STAGE], pageSize: 100, baseUrl: url })
const personConfig = (url: string) => ({ apiToken: TOKEN, eventName: 'demo_booked', personField: { key: FIELD, values: [QUALIFIED_OPTION] }, pageSize: 100, baseUrl: url })
const invalidOptions = [
  { apiToken: TOKEN, eventName: 'demo_booked' },
  { apiToken: TOKEN, eventName: 'demo_booked', dealStageIds: [3], personField: { key: FIELD, values: ['42'] } },
  { apiToken: TOKEN, eventName: 'demo_booked', dealStageIds: [] },
  { apiToken: TOKEN, eventName: 'demo_booked', dealStageIds: ['qualified'] },
  { apiToken: TOKEN, eventName: 'demo_booked', personField: { key: FIELD, values: [] } },
  { apiToken: TOKEN, eventName: 'demo_booked', personField: { key: 'Lead status', values: ['42'] } },
  { apiToken: TOKEN, eventName: 'demo_booked', dealStageIds: [3], pageSize: 501 },
  { apiToken: '', eventName: 'demo_booked', dealStageIds: [3] },
  { eventName: 'demo_booked', dealStageIds: [3] },
]

for (const [label, start, config] of [['deal stage', dealCrm, dealConfig], ['person field', personCrm, personConfig]] as const) {
  testCrmPoller<PipedriveOptions>({
    poller,
    folder: 'pipedrive',
    label,
    start,
    options: (crm) => config(crm.url),
    badCredentials: (crm) => ({ ...config(crm.url), apiToken: BAD_TOKEN }),
    secrets: () => [TOKEN, BAD_TOKEN],
    invalidOptions,
    pagingRecords: 250,
  })
}

describe('pipedrive poller', () => {
  let fake: FakePipedrive
  afterEach(async () => {
    await fake?.close()
  })
  const at = (minutesAgo: number) => new Date(CONTRACT_NOW.getTime() - minutesAgo * 60_000)
  const options = (overrides: Record<string, unknown> = {}) => v.parse(pipedriveOptions, { ...dealConfig(fake.url), ...overrides })
  const poll = (opts = options(), cursor?: string) => poller.poll(opts, cursor, pollContext())

  it('defaults: the public API host, 500 a page, 15 minutes of overlap; option ids are compared as text', () => {
    expect(v.parse(pipedriveOptions, { apiToken: TOKEN, eventName: 'x', personField: { key: 'label_ids', values: [7, 'vip'] } })).toEqual({
      apiToken: TOKEN, eventName: 'x', personField: { key: 'label_ids', values: ['7', 'vip'] }, overlapMinutes: 15, initialLookbackDays: 30, pageSize: 500, baseUrl: 'https://api.pipedrive.com',
    })
  })

  it('lists deals per stage with the token in x-api-token, updated_since = cursor − overlap in RFC 3339, oldest first', async () => {
    fake = await startFakePipedrive()
    fake.addDeal({ personId: fake.addPerson({ email: 'ada@example.com', at: at(50) }), stageId: 4, at: at(30) })
    const result = await poll(options({ dealStageIds: [3, 4] }), '2026-03-02T11:00:00.250Z')
    expect(result.qualified).toEqual([{ email: 'ada@example.com', eventName: 'demo_booked' }])
    expect(fake.requests.every((request) => request.headers['x-api-token'] === TOKEN && !request.path.includes(TOKEN))).toBe(true)
    expect(fake.lists.slice(0, 2).map((list) => list.query)).toEqual([3, 4].map((stage) => ({ stage_id: String(stage), updated_since: '2026-03-02T10:45:00Z', sort_by: 'update_time', sort_direction: 'asc', limit: '100' })))
    expect(fake.lists[2]).toEqual({ resource: 'persons', query: { ids: '1', limit: '100' } })
    expect(result.cursor).toBe(at(30).toISOString())
  })

  it('fetches persons by id 100 at a time and takes the primary email; deals without a person are passed over', async () => {
    fake = await startFakePipedrive()
    for (let i = 0; i < 150; i++) fake.addDeal({ personId: fake.addPerson({ email: `p${i}@example.com`, at: at(60) }), stageId: 3, at: at(60 - i / 10) })
    fake.addDeal({ personId: null, stageId: 3, at: at(1) })
    const result = await poll(options({ pageSize: 500 }))
    expect(result.qualified).toHaveLength(150)
    const byId = fake.lists.filter((list) => list.resource === 'persons').map((list) => list.query.ids!.split(',').length)
    expect(byId).toEqual([100, 50])
    expect(result.cursor).toBe(at(1).toISOString())
  })

  it('matches a person label as well as a custom field', async () => {
    fake = await startFakePipedrive()
    fake.addPerson({ email: 'hot@example.com', at: at(20), labelIds: [5, 7] })
    fake.addPerson({ email: 'cold@example.com', at: at(10), labelIds: [6] })
    const result = await poll(options({ dealStageIds: undefined, personField: { key: 'label_ids', values: [7] } }))
    expect(result.qualified).toEqual([{ email: 'hot@example.com', eventName: 'demo_booked' }])
    expect(fake.lists[0]!.query).not.toHaveProperty('custom_fields')
  })

  it('the daily budget\'s 429 waits its Retry-After; the burst window\'s waits x-ratelimit-reset', async () => {
    fake = await startFakePipedrive()
    fake.throttleNext()
    const daily = await poll().catch((error: unknown) => error)
    expect(daily).toBeInstanceOf(CrmRateLimitError)
    expect(daily).toMatchObject({ retryAfterMs: 3_939_000 })
    expect((daily as Error).message).toContain('daily request budget exceeded')
    fake.burstNext()
    expect(await poll().catch((error: unknown) => error)).toMatchObject({ retryAfterMs: 2000, status: 429 })
  })

  it('401 → CrmAuthError telling where the personal API token is; 403 → CrmAuthError about permissions', async () => {
    fake = await startFakePipedrive()
    const unauthorized = await poll(options({ apiToken: BAD_TOKEN })).catch((error: unknown) => error)
    expect(unauthorized).toBeInstanceOf(CrmAuthError)
    expect((unauthorized as Error).message).toMatch(/unauthorized access.*Personal preferences → API/)
    fake.queue({ status: 403, body: { success: false, error: 'You do not have permissions to access this resource', error_info: 'Please check developers.pipedrive.com for more information about Pipedrive API.', data: null, additional_data: null } })
    expect(await poll().catch((error: unknown) => error)).toMatchObject({ name: 'CrmAuthError', status: 403 })
  })

  it('a 400 from Pipedrive → a permanent CrmPollError naming the options to check', async () => {
    fake = await startFakePipedrive()
    fake.queue({ status: 400, body: { success: false, error: 'Validation failed: stage_id: Expected number', code: 'ERR_SCHEMA_VALIDATION_FAILED', error_info: 'x', data: null, additional_data: null } })
    const error = await poll().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmPollError)
    expect(error).toMatchObject({ retryable: false, status: 400 })
    expect((error as Error).message).toMatch(/stage_id: Expected number.*dealStageIds/)
  })

  it('an answer that is not the v2 envelope is a retryable error, not an empty poll', async () => {
    fake = await startFakePipedrive()
    fake.queue({ status: 200, body: { success: true, data: null } }, pipedriveErrors.unauthorized())
    expect(await poll().catch((error: unknown) => error)).toMatchObject({ name: 'CrmPollError', retryable: true })
  })
})
