import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { canonicalEmail, emailKeyForm, MailboxSchema } from '../../core/identity/email.ts'
import { normalizeEmail } from '../../core/identity/normalize.ts'

// The strict mailbox syntax of every email input (core/identity/README.md, "Email addresses").
describe('canonicalEmail', () => {
  it('accepts one mailbox and gives it trimmed, lowercased and in NFC: what normalizeEmail hashes', () => {
    const accepted: [string, string][] = [
      ['  Pat.Doe@Example.com ', 'pat.doe@example.com'],
      ["o'neil+tag@example.co.uk", "o'neil+tag@example.co.uk"],
      ["x!#$%&'*+/=?^_`{|}~-y@example.com", "x!#$%&'*+/=?^_`{|}~-y@example.com"],
      ['ann@b\u0075\u0308cher.de', 'ann@bücher.de'],
      ['ann@xn--bcher-kva.de', 'ann@xn--bcher-kva.de'],
      ['a@my-host.example\n', 'a@my-host.example'],
      [`${'l'.repeat(64)}@example.com`, `${'l'.repeat(64)}@example.com`],
    ]
    for (const [input, canonical] of accepted) {
      expect(canonicalEmail(input), JSON.stringify(input)).toBe(canonical)
      expect(normalizeEmail(input), JSON.stringify(input)).toBe(canonical)
    }
  })

  it('refuses lists, display names, quoted and odd local parts, bad domains and over-long addresses', () => {
    const refused = [
      'victim@example.com,root', 'victim@example.com, attacker@evil.example', 'victim@example.com;root@example.com',
      '"Click here to claim" <victim@example.com>', 'Victim <victim@example.com>', '"a b"@example.com', '"a"@example.com',
      'a b@example.com', 'a\tb@example.com', 'a..b@example.com', '.a@example.com', 'a.@example.com', 'a(comment)@example.com',
      'a<b@example.com', 'a>b@example.com', 'a:b@example.com', 'a[b]@example.com', 'a\\b@example.com', 'a@b@example.com',
      '@example.com', 'a@', 'a', '', 'a@localhost', 'a@b.c', 'a@1.2.3.4', 'a@[127.0.0.1]', 'a@example.com.', 'a@.example.com',
      'a@-x.example', 'a@x-.example', 'a@ex_ample.com', 'a@exa mple.com', 'ünïcode@example.com', 'a\u0000@example.com',
      'a@ex\ud800.com', `${'l'.repeat(65)}@example.com`, `a@${'b'.repeat(64)}.com`, `a@${Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.')}.com`,
      42, null, undefined, {},
    ]
    for (const input of refused) expect(canonicalEmail(input), JSON.stringify(input)).toBeUndefined()
  })

  it('keys one mailbox once, however its domain is spelled', () => {
    expect(emailKeyForm(canonicalEmail('Ann@Bücher.DE')!)).toBe(emailKeyForm(canonicalEmail('ann@xn--bcher-kva.de')!))
  })
})

describe('MailboxSchema', () => {
  it('outputs the canonical form and names what is wrong', () => {
    expect(v.parse(MailboxSchema, ' Ann@Example.COM ')).toBe('ann@example.com')
    const result = v.safeParse(MailboxSchema, 'victim@example.com,root')
    expect(result.success).toBe(false)
    expect(result.issues?.[0]?.message).toMatch(/^must be one email address/)
  })
})
