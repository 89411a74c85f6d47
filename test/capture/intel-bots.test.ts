/** Bot verdicts: the user agent (isbot), the browser's signals, the hit's timing, and the network. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BOT_RULES, botReasons } from '../../plugins/capture/intel/bots.ts'
import { createVisitIntel, type VisitIntel } from '../../plugins/capture/intel/index.ts'
import { toBotToken } from '../../plugins/capture/intel/ua.ts'

const UA = {
  chrome: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36',
  chromeMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36',
  firefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0',
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.6 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  googlebot: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/141.0.7390.122 Safari/537.36',
  headless: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/142.0.0.0 Safari/537.36',
  curl: 'curl/8.5.0',
  python: 'python-requests/2.32.3',
}
const RESIDENTIAL = '79.194.0.1' // Deutsche Telekom
const HETZNER = '5.9.1.1'

let dir: string
let intel: VisitIntel
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dcgate-intel-bots-'))
  intel = await createVisitIntel({ dataDir: dir, logger: { info: () => {}, warn: () => {} } })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** What a real browser with a person in front of it sends with a page view, then with a form, a few seconds later. */
const humanPageview = { webdriver: false, interactions: 0, sinceLoadMs: 420 }
const humanForm = { webdriver: false, interactions: 37, firstInteractionMs: 1_900, sinceLoadMs: 14_250 }

describe('people are not bots', () => {
  it.each(['chrome', 'chromeMac', 'firefox', 'iphone', 'android', 'ipad'] as const)('%s from a residential line, page view and form', (name) => {
    for (const [signals, kind] of [[humanPageview, 'pageview'], [humanForm, 'form']] as const) {
      expect(intel.classify({ ip: RESIDENTIAL, userAgent: UA[name], signals, timing: { kind } })).toMatchObject({ isBot: false, botReasons: [] })
    }
  })

  it('a page view with no signals at all (old browser, no script) is not a bot either', () => {
    expect(intel.classify({ ip: RESIDENTIAL, userAgent: UA.chrome })).toMatchObject({ isBot: false, botReasons: [] })
  })

  it('a programmatic event at load (ViewContent) is fine without interaction', () => {
    const info = intel.classify({ ip: RESIDENTIAL, userAgent: UA.chrome, signals: { interactions: 0, sinceLoadMs: 300 }, timing: { kind: 'event' } })
    expect(info.isBot).toBe(false)
  })
})

describe('user agent', () => {
  it.each([
    ['googlebot', 'ua:google', 'bot'],
    ['headless', 'ua:headless', 'bot'],
    ['curl', 'ua:curl', 'bot'],
    ['python', 'ua:python-requests', 'bot'],
  ] as const)('%s → %s', (name, reason, platform) => {
    const info = intel.classify({ ip: RESIDENTIAL, userAgent: UA[name] })
    expect(info).toMatchObject({ isBot: true, platform })
    expect(info.botReasons).toEqual([reason])
  })

  it('no or an empty user agent is a bot', () => {
    expect(intel.classify({ ip: RESIDENTIAL, userAgent: undefined }).botReasons).toEqual(['no-user-agent'])
    expect(intel.classify({ ip: RESIDENTIAL, userAgent: '   ' }).botReasons).toEqual(['no-user-agent'])
  })

  it('turns isbot matches into short codes', () => {
    expect(toBotToken('Googlebot/2.1')).toBe('googlebot')
    expect(toBotToken('curl/8.5.0')).toBe('curl')
    expect(toBotToken('Mozilla/5.0 (compatible; Foo Bar)')).toBe('mozilla')
    expect(toBotToken('///')).toBe('pattern')
  })
})

describe('browser signals', () => {
  const chrome = (signals: object, kind?: 'pageview' | 'event' | 'form') =>
    intel.classify({ ip: RESIDENTIAL, userAgent: UA.chrome, signals, timing: kind ? { kind } : undefined }).botReasons

  it('navigator.webdriver → webdriver', () => {
    expect(chrome({ ...humanPageview, webdriver: true })).toEqual(['webdriver'])
  })

  it('headless hints → headless:<hint>, cleaned and capped', () => {
    expect(chrome({ headless: ['no-window-chrome', 'zero-outer-size'] })).toEqual(['headless:no-window-chrome', 'headless:zero-outer-size'])
    expect(chrome({ headless: ['HeadlessChrome-ua', '<script>', 'HeadlessChrome-ua'] })).toEqual(['headless:headlesschrome-ua', 'headless:script'])
    expect(chrome({ headless: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] })).toHaveLength(5)
  })

  it('interactions reported before the page could have run → impossible-timing', () => {
    expect(chrome({ interactions: 3, firstInteractionMs: 12, sinceLoadMs: 900 })).toEqual(['impossible-timing'])
    expect(chrome({ interactions: 3, sinceLoadMs: 30 })).toEqual(['impossible-timing'])
    // the first interaction after the hit was sent
    expect(chrome({ interactions: 3, firstInteractionMs: 5_000, sinceLoadMs: 900 })).toEqual(['impossible-timing'])
    expect(chrome({ interactions: 3, firstInteractionMs: 50, sinceLoadMs: 900 })).toEqual([])
  })

  it('a form sent with no interaction right after load → no-interaction-fast', () => {
    expect(chrome({ interactions: 0, sinceLoadMs: 800 }, 'form')).toEqual(['no-interaction-fast'])
    expect(chrome({ interactions: 0, sinceLoadMs: 800 }, 'pageview')).toEqual([])
    expect(chrome({ interactions: 0, sinceLoadMs: 8_000 }, 'form')).toEqual([])
    expect(chrome({ sinceLoadMs: 800 }, 'form')).toEqual([]) // no count reported: no verdict
  })
})

describe('network', () => {
  it('a browser on a datacenter address → datacenter-ip', () => {
    expect(intel.classify({ ip: HETZNER, userAgent: UA.chrome, signals: humanForm }).botReasons).toEqual(['datacenter-ip'])
  })

  it('Tor and VPN users are not bots for their address alone', () => {
    expect(intel.classify({ ip: '185.220.101.18', userAgent: UA.firefox }).isBot).toBe(false)
    expect(intel.classify({ ip: '45.83.220.1', userAgent: UA.chrome }).isBot).toBe(false)
  })

  it('every rule that fires is listed, in a stable order', () => {
    const info = intel.classify({ ip: HETZNER, userAgent: UA.headless, signals: { webdriver: true, headless: ['no-plugins'], interactions: 0, sinceLoadMs: 100 }, timing: { kind: 'form' } })
    expect(info.botReasons).toEqual(['ua:headless', 'webdriver', 'headless:no-plugins', 'no-interaction-fast', 'datacenter-ip'])
  })
})

describe('the rules are documented', () => {
  it('each reason code botReasons can give is in BOT_RULES and README.md', async () => {
    const { readFile } = await import('node:fs/promises')
    const readme = await readFile(new URL('../../plugins/capture/intel/README.md', import.meta.url), 'utf8')
    const all = botReasons({ userAgent: '', uaBotToken: 'x', signals: { webdriver: true, headless: ['h'], interactions: 1, sinceLoadMs: 1 }, isHosting: true, isPrivacyNetwork: false })
    const codes = [...all, ...botReasons({ userAgent: 'a', signals: { interactions: 0, sinceLoadMs: 1 }, timing: { kind: 'form' }, isHosting: false, isPrivacyNetwork: false })]
      .map((code) => code.replace(/^ua:.*/, 'ua:<token>').replace(/^headless:.*/, 'headless:<hint>'))
    expect(new Set(codes)).toEqual(new Set(Object.keys(BOT_RULES)))
    for (const code of Object.keys(BOT_RULES)) expect(readme).toContain(`\`${code}\``)
  })
})
