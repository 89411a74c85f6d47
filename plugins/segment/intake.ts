/**
 * Segment messages → conversions. Each message is checked on its own (size, text PostgreSQL cannot store, the
 * automation schema), so one bad message never costs the others; a `track` of an event the site knows goes through
 * the pipeline exactly as POST /api/v1/conversions/automation would take it, with the Segment messageId as the
 * idempotency key. `identify`, `page` and the other types are accepted and ignored (README.md says why).
 */
import * as v from 'valibot'
import { formatIssues } from '../../core/config/issues.ts'
import { inspectJson } from '../../core/http/text.ts'
import { ConversionRequest, toConversionInput } from '../../core/intake/conversion-request.ts'
import type { ConversionPipeline } from '../../core/delivery/pipeline.ts'
import { DUPLICATE } from '../../core/delivery/pipeline.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { derivedMessageId, inSegmentTerms, siteEventFor, toAutomationBody } from './message.ts'

/** Segment's documented limit for one message (32 KB). */
export const MAX_MESSAGE_BYTES = 32 * 1024
/** The longest event name taken, as on the automation route; a longer one is refused before any other work. */
export const MAX_EVENT_CHARS = 255
/** Messages stored at once; a large batch goes through in slices, so memory stays bounded. */
const SLICE = 50
/** Refused messages named in the answer; the count covers them all (a batch of junk must not make a huge answer). */
const LISTED_PROBLEMS = 100

const SEGMENT_TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const

export interface MessageProblem { index: number, messageId?: string, errors: string[] }

/** What the answer reports: counts, and why each refused message was refused. */
export interface IntakeSummary {
  success: true
  /** Conversions stored (new ones; a repeat counts under duplicates). */
  accepted: number
  /** Messages whose messageId was already taken: a retried batch counts once. */
  duplicates: number
  /** Messages understood and not turned into a conversion: identify, page…, and events the site does not know. */
  ignored: number
  rejected: number
  errors?: MessageProblem[]
}

/** A message refused for what it holds: the answer names it, and a retry will not change it. */
class MessageError extends Error {
  readonly problems: string[]
  constructor(problems: string[]) {
    super(problems.join('; '))
    this.problems = problems
  }
}

export async function takeMessages(
  site: ActiveSite, messages: readonly unknown[], conversions: ConversionPipeline,
  options: { type?: typeof SEGMENT_TYPES[number], batchSentAt?: unknown, receivedAt: Date },
): Promise<IntakeSummary> {
  const summary: IntakeSummary = { success: true, accepted: 0, duplicates: 0, ignored: 0, rejected: 0 }
  const problems: MessageProblem[] = []
  for (let start = 0; start < messages.length; start += SLICE) {
    const slice = messages.slice(start, start + SLICE)
    // A failure to store (database) rejects here and becomes a 5xx: the client retries, and repeats are skipped.
    const outcomes = await Promise.all(slice.map((message, offset) => takeOne(site, message, conversions, options).catch((error: unknown) => {
      if (!(error instanceof MessageError)) throw error
      if (problems.length < LISTED_PROBLEMS) problems.push({ index: start + offset, messageId: idOf(message), errors: error.problems })
      return 'rejected' as const
    })))
    for (const outcome of outcomes) summary[outcome]++
  }
  if (problems.length) summary.errors = problems.sort((a, b) => a.index - b.index)
  return summary
}

async function takeOne(
  site: ActiveSite, raw: unknown, conversions: ConversionPipeline, options: { type?: string, batchSentAt?: unknown, receivedAt: Date },
): Promise<'accepted' | 'duplicates' | 'ignored'> {
  const message = checkedMessage(raw)
  const type = message.type ?? options.type
  if (typeof type !== 'string' || !(SEGMENT_TYPES as readonly string[]).includes(type)) throw new MessageError([`type: must be one of ${SEGMENT_TYPES.join(', ')}`])
  if (type !== 'track') return 'ignored'
  if (typeof message.event !== 'string' || message.event.trim() === '') throw new MessageError(['event: is required for a track message'])
  if (message.event.length > MAX_EVENT_CHARS) throw new MessageError([`event: is ${message.event.length} characters; at most ${MAX_EVENT_CHARS} are taken`])
  const event = siteEventFor(site.config, message.event.trim())
  if (!event) return 'ignored'
  const parsed = v.safeParse(ConversionRequest, toAutomationBody(message, event, options))
  if (!parsed.success) throw new MessageError(formatIssues(parsed.issues).map((line) => inSegmentTerms(line, message)))
  const input = toConversionInput(parsed.output)
  const messageId = input.messageId ?? derivedMessageId(message)
  const result = await conversions.accept(site, { ...input, messageId, messageIdGenerated: input.messageId === undefined || undefined }, {
    source: 'segment', sourceEventType: `segment:${type}`, confirmation: 'tracked', trust: 'trusted', deliver: 'background',
  })
  return result.message === DUPLICATE ? 'duplicates' : 'accepted'
}

/** The message as an object within Segment's size, holding only text PostgreSQL can store. */
function checkedMessage(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new MessageError(['message: must be a JSON object'])
  const size = Buffer.byteLength(JSON.stringify(raw))
  if (size > MAX_MESSAGE_BYTES) throw new MessageError([`message: is ${size} bytes; at most ${MAX_MESSAGE_BYTES} are taken per message`])
  const unstorable = inspectJson(raw, { strings: true })
  if (unstorable.length) throw new MessageError(unstorable)
  return raw as Record<string, unknown>
}

function idOf(message: unknown): string | undefined {
  const id = (message as { messageId?: unknown } | null)?.messageId
  return typeof id === 'string' && id.length <= 255 && inspectJson(id, { strings: true }).length === 0 ? id : undefined
}
