import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../core/config/load.ts'
import type { BootError } from '../../core/errors.ts'
import { bannerText } from '../../plugins/capture/client/banner.ts'

const texts = {
  'de': { message: 'Einverstanden?', accept: 'Ja', reject: 'Nein' },
  'fr-ca': { message: 'D’accord?', accept: 'Oui', reject: 'Non' },
  'fr': { message: 'D’accord ?', accept: 'Oui', reject: 'Non' },
}

describe('the banner language', () => {
  it('takes the exact tag, then the same language, then the first language the site gave', () => {
    expect(bannerText(texts, ['fr-CA', 'en'])).toBe(texts['fr-ca'])
    expect(bannerText(texts, ['fr-BE'])).toBe(texts.fr) // same language, the plain tag first
    expect(bannerText({ 'de': texts.de, 'fr-ca': texts['fr-ca'] }, ['fr-BE'])).toBe(texts['fr-ca'])
    expect(bannerText(texts, ['en-US', 'de-AT'])).toBe(texts.de) // a later preference of the visitor still beats the fallback
    expect(bannerText(texts, ['ja'])).toBe(texts.de)
    expect(bannerText({ fr: texts.fr }, ['constructor', 'toString'])).toBe(texts.fr)
  })

  it('is the built-in English when the site gave none', () => {
    expect(bannerText(undefined, ['de'])).toMatchObject({ accept: 'Accept', reject: 'Reject' })
  })
})

describe('consent.text in the config', () => {
  it('keeps language tags lower-cased and words trimmed, and refuses what the banner cannot show', () => {
    const [site] = resolveConfig({ sites: [{ id: 'shop', name: 'Shop', consent: { text: { 'DE-at': { message: ' Einverstanden? ', accept: 'Ja', reject: 'Nein' } } } }] }, {}).sites
    expect(site!.consent.text).toEqual({ 'de-at': { message: 'Einverstanden?', accept: 'Ja', reject: 'Nein' } })
    const refused = (text: unknown) => {
      try {
        resolveConfig({ sites: [{ id: 'shop', name: 'Shop', consent: { text } }] }, {})
      }
      catch (error) {
        return (error as BootError).details
      }
      return []
    }
    expect(refused({ german: { message: 'x', accept: 'a', reject: 'b' } })).toEqual(['sites[0].consent.text.german: must be a language tag such as de or fr-ca'])
    expect(refused({ de: { message: 'x', accept: ' ', reject: 'n'.repeat(41) } })).toEqual([
      'sites[0].consent.text.de.accept: is required',
      'sites[0].consent.text.de.reject: Invalid length: Expected <=40',
    ])
  })
})
