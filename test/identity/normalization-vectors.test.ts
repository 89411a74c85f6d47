// Every vendor's documented normalisation examples (./normalization-vectors.ts) through hashIdentity, then through the
// platform's own adapter (the digest must be in the request body), and for Meta through Meta's SDK normaliser.
import { createHash } from 'node:crypto'
import { ServerSideUtils } from 'facebook-nodejs-business-sdk'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { adapters } from '../../adapters/index.ts'
import type { HashedIdentity } from '../../core/delivery/types.ts'
import type { AdPlatformDefinition } from '../../core/registry.ts'
import { hashIdentity, type IdentityTraits } from '../../core/identity/hash.ts'
import { purchaseFixture } from '../contract/fixtures.ts'
import { NORMALIZATION_VECTORS, type VectorCase } from './normalization-vectors.ts'

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** The smallest valid options of each adapter: toRequest is pure, nothing is sent. */
const OPTIONS: Record<string, Record<string, unknown>> = {
  meta: { pixelId: '1234567890123456', accessToken: 'token' },
  google_ads: {
    customerId: '123-456-7890', developerToken: 'dev-token-22-characters', clientId: 'client', clientSecret: 'secret',
    refreshToken: 'refresh', conversionActions: { Purchase: '111' },
  },
  tiktok: { pixelCode: 'CFAKEPIXEL0123456789', accessToken: 'token' },
  reddit: { pixelId: 'a2_fake1234abcd', accessToken: 'token' },
  microsoft_ads: { tagId: '187004321', apiToken: 'token' },
  pinterest: { adAccountId: '549755885175', accessToken: 'token' },
  x: { consumerKey: 'ck', consumerSecret: 'cs', accessToken: 'at', accessTokenSecret: 'as', pixelId: 'o8z6j', events: { Purchase: 'o87ne' } },
  linkedin: { accessToken: 'token', conversionRules: { Purchase: '101' } },
  ga4: { measurementId: 'G-ABC123XYZ', apiSecret: 'secret' },
  snapchat: { pixelId: '1ec32188-754e-4be2-8e55-c949a984a39f', accessToken: 'token' },
}

/** Meta's user_data key, and the trait it is made from, for each HashedIdentity variant Meta takes. */
const META_KEY: Partial<Record<keyof HashedIdentity, [string, keyof IdentityTraits]>> = {
  email: ['em', 'email'], phoneDigits: ['ph', 'phone'], firstName: ['fn', 'first_name'], lastName: ['ln', 'last_name'],
  city: ['ct', 'city'], state: ['st', 'state'], zip: ['zp', 'postal_code'], country: ['country', 'country'],
}

function platform(name: string): AdPlatformDefinition<unknown> {
  const found = adapters.find((adapter) => adapter.kind === 'ad-platform' && adapter.name === name)
  if (!found) throw new Error(`no ad platform named ${name}`)
  return found as AdPlatformDefinition<unknown>
}

/** The digest the vendor expects: its published one, else SHA-256 of its normalised text. */
function expectedDigest(vector: VectorCase): string {
  const { text, sha256: published } = vector.expected
  if (published && text) expect(sha256(text), 'the published digest is of the published text').toBe(published)
  return published ?? sha256(text!)
}

const title = (vector: VectorCase) => `${JSON.stringify(vector.input)}${vector.defaultCountry ? ` in ${vector.defaultCountry}` : ''} → ${vector.field}`

describe.each(NORMALIZATION_VECTORS)('normalisation vectors: $platform ($source, read $read)', ({ platform: name, cases }) => {
  const adapter = platform(name)
  const options = v.parse(adapter.options as v.GenericSchema, OPTIONS[name])

  it.each(cases.filter((vector) => !vector.ours).map((vector) => [title(vector), vector] as const))('%s', (_, vector) => {
    const digest = expectedDigest(vector)
    const identity = hashIdentity(vector.input, { defaultCountry: vector.defaultCountry })
    expect(identity[vector.field]).toBe(digest)
    if (vector.inRequest !== false) {
      const body = adapter.toRequest([{ ...purchaseFixture(), identity }], options).body
      expect(body, `${name}'s request carries the digest`).toContain(digest)
    }
  })

  const deviations = cases.filter((vector) => vector.ours)
  if (deviations.length > 0) {
    it.each(deviations.map((vector) => [title(vector), vector] as const))('%s: a documented deviation', (_, vector) => {
      const ours = vector.ours!
      const identity = hashIdentity(vector.input, { defaultCountry: vector.defaultCountry })
      expect(identity[vector.field]).toBe(ours.text === null ? undefined : sha256(ours.text))
      expect(identity[vector.field]).not.toBe(expectedDigest(vector))
    })
  }
})

describe("Meta's own normaliser agrees (facebook-nodejs-business-sdk ServerSideUtils)", () => {
  const meta = NORMALIZATION_VECTORS.find((block) => block.platform === 'meta')!
  const checked = meta.cases.filter((vector) => vector.oracle === 'meta-sdk')

  it.each(checked.map((vector) => [title(vector), vector] as const))('%s', (_, vector) => {
    const [key, trait] = META_KEY[vector.field]!
    expect(ServerSideUtils.normalizeAndHash(vector.input[trait]!, key)).toBe(expectedDigest(vector))
    expect(hashIdentity(vector.input, { defaultCountry: vector.defaultCountry })[vector.field]).toBe(expectedDigest(vector))
  })

  it('covers every field Meta takes that the SDK normalises', () => {
    expect(new Set(checked.map((vector) => vector.field))).toEqual(new Set(Object.keys(META_KEY)))
  })
})
