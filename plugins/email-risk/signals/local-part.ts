/**
 * Heuristics on the part before the @ (pure, documented in ../README.md#heuristics, pinned by the verdict table
 * in test/email-risk/verdicts.test.ts). They read real-looking names of many languages as names and keyboard
 * mashes, random ids and throwaway patterns as such; they are signals, never a verdict on their own.
 */

const VOWELS = /[aeiouy]/
/** Letter pairs that (almost) never occur inside words of English and the common European languages. */
const RARE_BIGRAMS = new Set(('bx cj cv cx dx fq fx gq gx hx jc jf jg jq js jv jw jx jz kq kx mx px pz qb qc qd qf qg qh qj qk ql qm qn qp qs '
  + 'qt qv qw qx qy qz sx vb vf vh vj vm vp vq vt vw vx wx xj xx zj zq zx').split(' '))
const KEYBOARD_RUNS = ['qwert', 'werty', 'asdf', 'sdfg', 'dfgh', 'fghj', 'ghjk', 'hjkl', 'zxcv', 'xcvb', 'cvbn', 'yxcv', 'azert', 'qwertz']
/** Words a throwaway or scripted address is made of, followed by a number: user1234, test_0042. */
const GENERIC_WORDS = 'user|test|tester|testing|temp|tmp|fake|demo|sample|account|acct|mail|email|guest|spam|noreply|abc|xyz|asdf|qwerty|lol|signup|trial|bot'
const GENERIC_NUMBERED = new RegExp(`^(?:${GENERIC_WORDS})[._-]?\\d{2,}$`)

export interface LocalPartSignals {
  gibberish: boolean
  /** Shapes of scripted sign-ups seen on this one address (the site-wide repeat count is in ./shapes.ts). */
  bulkShape: boolean
  plusAddressing: boolean
}

/** `local` is the lowercased part before the @; `domain` the lowercased domain. */
export function readLocalPart(local: string, domain: string): LocalPartSignals {
  const base = local.split('+')[0] ?? local
  return {
    gibberish: isGibberish(base),
    bulkShape: GENERIC_NUMBERED.test(base) || isGmailDotTrick(base, domain),
    plusAddressing: local.includes('+') && base.length > 0,
  }
}

/**
 * Gibberish: one strong sign, or two weak ones.
 * Strong: a run of 6+ letters without a vowel (y counts); a keyboard row (qwert, asdf…); a random hex id (10+
 * characters of 0-9a-f with 3+ digits and 3+ letters); 6+ switches between letters and digits (a8f3k29d1x).
 * Weak: 5+ consonants in a row; 2+ letter pairs that do not occur in words; under a fifth vowels in 8+ letters
 * (Polish and Czech names run to 5–6 consonants and a fifth vowels: chrzczonowicz passes).
 */
export function isGibberish(base: string): boolean {
  const letters = base.replace(/[^a-z]/g, '')
  const runs = base.split(/[^a-z]+/).filter(Boolean)
  const strong = runs.some((run) => run.length >= 6 && !VOWELS.test(run))
    || KEYBOARD_RUNS.some((row) => base.includes(row))
    || isHexId(base)
    || letterDigitSwitches(base) >= 6
  if (strong) return true
  let weak = 0
  if (runs.some((run) => longestConsonantRun(run) >= 5)) weak++
  if (runs.reduce((count, run) => count + rareBigrams(run), 0) >= 2) weak++
  if (letters.length >= 8 && vowelShare(letters) < 0.2) weak++
  return weak >= 2
}

function isHexId(base: string): boolean {
  const compact = base.replace(/[._-]/g, '')
  if (compact.length < 10 || !/^[0-9a-f]+$/.test(compact)) return false
  return (compact.match(/\d/g)?.length ?? 0) >= 3 && (compact.match(/[a-f]/g)?.length ?? 0) >= 3
}

function letterDigitSwitches(base: string): number {
  let switches = 0
  for (let i = 1; i < base.length; i++) {
    const previous = base[i - 1]!
    const current = base[i]!
    if ((/\d/.test(previous) && /[a-z]/.test(current)) || (/[a-z]/.test(previous) && /\d/.test(current))) switches++
  }
  return switches
}

function longestConsonantRun(run: string): number {
  let longest = 0
  let current = 0
  for (const char of run) {
    current = VOWELS.test(char) ? 0 : current + 1
    longest = Math.max(longest, current)
  }
  return longest
}

function rareBigrams(run: string): number {
  let count = 0
  for (let i = 1; i < run.length; i++) if (RARE_BIGRAMS.has(run.slice(i - 1, i + 1))) count++
  return count
}

function vowelShare(letters: string): number {
  let vowels = 0
  for (const char of letters) if (VOWELS.test(char)) vowels++
  return vowels / letters.length
}

/** Gmail ignores dots: j.o.h.n.doe@gmail.com reaches johndoe, so many dots (or 3+ one-letter pieces) mint aliases. */
function isGmailDotTrick(base: string, domain: string): boolean {
  if (domain !== 'gmail.com' && domain !== 'googlemail.com') return false
  const pieces = base.split('.')
  return pieces.length >= 4 || pieces.filter((piece) => piece.length === 1).length >= 3
}

/** The mailbox an address reaches: the +tag dropped, and Gmail's dots dropped (j.o.h.n@gmail.com reaches john@). */
export function mailboxOf(local: string, domain: string): string {
  const base = local.split('+')[0] ?? local
  return `${domain === 'gmail.com' || domain === 'googlemail.com' ? base.replaceAll('.', '') : base}@${domain}`
}

/** The mailbox with every number collapsed: anna.k7@x.io, anna.k8@x.io and anna.k9+a@x.io share one shape. */
export function shapeOf(mailbox: string): string {
  return mailbox.replace(/\d+/g, '#')
}
