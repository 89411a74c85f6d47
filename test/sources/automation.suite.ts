import { createHash, createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as v from 'valibot'
import { SourceInputError } from '../../core/registry.ts'
import { ConversionRequest, toConversionInput } from '../../core/intake/conversion-request.ts'
import automation, { make, n8n, zapier, type AutomationOptions } from '../../adapters/sources/automation/index.ts'
import { conversionsOf, testIntakeSource } from '../contract/intake-source.ts'

const SECRET = 'n8n-4f9c2a7e1b3d5f8a6c0e'
const BODY = readFileSync(new URL('fixtures/automation-conversion.json', import.meta.url), 'utf8')
/** A Make scenario's lead with no messageId, claiming a CRM qualification, as the tool serialises it. */
const LEAD = '{"event":"Lead","timestamp":1795246200,"properties":{"confirmation":"crm_qualified"},"context":{"traits":{"email":"lead@example.com"},"identifiers":{"li_fat_id":"a1b2c3"}}}'
const LEAD_ID = `body-${createHash('sha256').update(LEAD).digest('hex').slice(0, 32)}`

/** `X-Dcgate-Signature: sha256=<hex HMAC-SHA256 of the raw body>`. */
function sign(raw: Uint8Array, options: AutomationOptions): Headers {
  return new Headers({ 'X-Dcgate-Signature': `sha256=${createHmac('sha256', options.secret ?? '').update(raw).digest('hex')}` })
}

const encode = (text: string) => new TextEncoder().encode(text)

for (const source of [zapier, make, n8n]) {
  testIntakeSource({
    source,
    folder: 'automation',
    options: { secret: SECRET },
    otherOptions: { secret: 'another-secret-of-16-chars' },
    invalidOptions: [{ secret: 'short' }, { secret: 42 }, { secret: SECRET, confirmation: 'payment_confirmed' }, 'secret'],
    sign,
    signatureHeader: 'X-Dcgate-Signature',
    fixtures: [
      {
        name: 'a purchase with its own messageId',
        body: BODY,
        headers: { 'Content-Type': 'application/json' },
        expected: [{ messageId: 'zap-order-1001', event: 'Purchase', value: 129.85, currency: 'EUR', orderId: '1001' }],
        redelivery: { headers: { 'X-Request-Id': 'retry-2' } },
      },
      {
        name: 'a lead without messageId, claiming crm_qualified',
        body: LEAD,
        headers: { 'Content-Type': 'application/json' },
        expected: [{ messageId: LEAD_ID, event: 'Lead', confirmation: 'crm_qualified' }],
        // A tool retrying a failed step sends the same bytes.
        redelivery: { headers: { 'X-Request-Id': 'retry-3' } },
      },
    ],
  })
}

describe('automation sources', () => {
  const signed = v.parse(n8n.options, { secret: SECRET })
  const unsigned = v.parse(zapier.options, {})
  const parse = (body: string, source = n8n) => source.parse(encode(body), new Headers(), signed)

  it('are three definitions of one factory, exported for registration', () => {
    expect(automation.map((s) => s.name)).toEqual(['zapier', 'make', 'n8n'])
    expect(automation.map((s) => [s.signature, s.confirmation])).toEqual([['optional', 'tracked'], ['optional', 'tracked'], ['optional', 'tracked']])
  })

  it('switch on with {}; an unsigned body is read (the route records it as tracked)', () => {
    expect(unsigned).toEqual({})
    expect(zapier.isSigned(new Headers({ 'Content-Type': 'application/json' }))).toBe(false)
    expect(conversionsOf(zapier.parse(encode(BODY), new Headers(), unsigned))[0]!.messageId).toBe('zap-order-1001')
  })

  it('fail a signature when no secret is configured, so the route answers 401 rather than trusting it', () => {
    const raw = encode(BODY)
    expect(zapier.verify(raw, sign(raw, { secret: SECRET }), unsigned, new Date())).toBe(false)
  })

  it('take the hex in upper or lower case, and require the sha256= prefix', () => {
    const raw = encode(BODY)
    const hex = createHmac('sha256', SECRET).update(raw).digest('hex')
    const verify = (header: string) => n8n.verify(raw, new Headers({ 'X-Dcgate-Signature': header }), signed, new Date())
    expect([verify(`sha256=${hex}`), verify(`SHA256=${hex.toUpperCase()}`), verify(` sha256=${hex} `)]).toEqual([true, true, true])
    expect([verify(hex), verify(`sha1=${hex}`), verify(`sha256=${createHmac('sha256', SECRET).update(raw).digest('base64')}`)]).toEqual([false, false, false])
  })

  it('read the body exactly as the automation route does', () => {
    const route = toConversionInput(v.parse(ConversionRequest, JSON.parse(BODY)))
    expect(conversionsOf(parse(BODY))[0]).toEqual(Object.fromEntries(Object.entries(route).filter(([, value]) => value !== undefined)))
  })

  it('derive a missing messageId from the raw bytes: a retry dedupes, another body does not', () => {
    expect(conversionsOf(parse(LEAD))[0]!.messageId).toBe(LEAD_ID)
    expect(conversionsOf(parse(LEAD, make))[0]!.messageId).toBe(LEAD_ID)
    expect(conversionsOf(parse(LEAD.replace('lead@', 'other@')))[0]!.messageId).not.toBe(LEAD_ID)
  })

  it('pass on a confirmation claim only when the body makes one, and refuse an unknown claim', () => {
    expect(conversionsOf(parse(BODY))[0]).not.toHaveProperty('confirmation')
    const claim = (confirmation: unknown) => JSON.stringify({ event: 'Purchase', messageId: 'm-1', properties: { confirmation } })
    expect(conversionsOf(parse(claim('payment_confirmed')))[0]!.confirmation).toBe('payment_confirmed')
    expect(() => parse(claim('paid'))).toThrow(new SourceInputError('properties.confirmation: must be one of payment_confirmed, crm_qualified, tracked'))
  })

  it('refuse a timestamp beyond what a date can hold, or a day the month does not have', () => {
    expect(() => parse('{"event":"Lead","timestamp":8640000000000001}')).toThrow('timestamp: must be a real date')
    expect(() => parse('{"event":"Lead","timestamp":"2026-02-30T10:00:00Z"}')).toThrow('timestamp: must be a real date')
  })

  it('report every schema problem with its field path', () => {
    const body = JSON.stringify({ messageId: '', properties: { value: 'lots', currency: 'euro' }, context: { ip: 'nowhere', identifiers: { gclid: 5 } } })
    let error: SourceInputError | undefined
    try {
      parse(body)
    }
    catch (caught) {
      error = caught as SourceInputError
    }
    expect(error).toBeInstanceOf(SourceInputError)
    expect(error!.problems).toEqual(expect.arrayContaining([
      'event: is required',
      expect.stringMatching(/^messageId: /),
      'properties.value: must be a number',
      'properties.currency: must be a 3-letter currency code',
      'context.identifiers.gclid: must be a string',
      'context.ip: must be an IPv4 or IPv6 address',
    ]))
    expect(error!.message).toBe(error!.problems.join('; '))
  })
})

describe('automation sources: refund events', () => {
  const options = v.parse(make.options, { secret: SECRET })
  const parse = (body: unknown) => make.parse(encode(JSON.stringify(body)), new Headers(), options)

  it('reads Refund / Order Refunded (any case) with its amount, and Order Cancelled as the whole value', () => {
    expect(parse({ event: 'Order Refunded', properties: { order_id: 1001, refund_id: 'rf-1', amount: '40.00', currency: 'eur', refunded_at: '2026-11-24T09:30:00Z' } })).toEqual({
      kind: 'refund', sourceEventType: 'Order Refunded',
      refund: { orderId: '1001', refundId: 'rf-1', amount: 40, currency: 'EUR', at: new Date('2026-11-24T09:30:00Z') },
    })
    expect(parse({ event: ' refund ', properties: { order_id: '1001', refund_id: 'rf-2' } })).toMatchObject({ refund: { orderId: '1001', refundId: 'rf-2' } })
    expect(parse({ event: 'Order Cancelled', properties: { order_id: '1001', amount: 5 } })).toMatchObject({ refund: { orderId: '1001', refundId: 'cancelled' } })
    expect((parse({ event: 'Order Cancelled', properties: { order_id: '1001' } }) as { refund: object }).refund).not.toHaveProperty('amount')
  })

  it('without refund_id, the id comes from the body bytes: a tool retrying the same body counts once', () => {
    const body = { event: 'Refund', properties: { order_id: '1001', amount: 10 } }
    const id = `body-${createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 32)}`
    expect(parse(body)).toMatchObject({ refund: { refundId: id } })
  })

  it('property: a refund body with arbitrary properties is read or refused, never thrown otherwise', () => {
    fc.assert(fc.property(fc.constantFrom('Refund', 'ORDER REFUNDED', 'Order Canceled'), fc.dictionary(fc.constantFrom('order_id', 'refund_id', 'amount', 'currency', 'refunded_at', 'x'), fc.jsonValue({ maxDepth: 2 })), (event, properties) => {
      try {
        expect(parse({ event, properties }).kind).toBe('refund')
      }
      catch (error) {
        expect(error).toBeInstanceOf(SourceInputError)
      }
    }), { numRuns: 300 })
  })

  it('refuses a refund without an order, or with fields of the wrong kind, naming each', () => {
    const refused = (body: unknown) => {
      try {
        parse(body)
      }
      catch (error) {
        if (error instanceof SourceInputError) return error.problems
        throw error
      }
      throw new Error('not refused')
    }
    expect(refused({ event: 'Refund' })).toEqual([expect.stringMatching(/^properties: /)])
    expect(refused({ event: 'Refund', properties: { order_id: '' } })).toEqual(['properties.order_id: must not be empty'])
    expect(refused({ event: 'Refund', properties: { order_id: 'x'.repeat(256) } })).toEqual(['properties.order_id: must be at most 255 characters'])
    expect(refused({ event: 'Refund', properties: { order_id: { id: 1 } } })[0]).toMatch(/^properties\.order_id: /)
    expect(refused({ event: 'Refund', properties: { order_id: '1', amount: -5 } })).toEqual(['properties.amount: must be 0 or more'])
    expect(refused({ event: 'Refund', properties: { order_id: '1', amount: 'lots' } })[0]).toMatch(/^properties\.amount: must be an amount/)
    expect(refused({ event: 'Refund', properties: { order_id: '1', refunded_at: 'yesterday' } })[0]).toMatch(/^properties\.refunded_at: /)
    expect(refused({ event: 'Refund', properties: { order_id: '1', currency: 'euro' } })).toEqual(['properties.currency: must be a 3-letter currency code'])
  })
})
