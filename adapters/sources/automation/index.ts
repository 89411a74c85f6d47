/**
 * Zapier, Make and n8n: the same JSON body as POST /api/v1/conversions/automation, posted to the public source
 * URL. A signature is optional; an unsigned body is accepted only as `tracked`, a signed one may claim more.
 * One factory, three names, so each tool has its own entry under `sites[].sources`. Setup: README.md.
 */
import { createHash } from 'node:crypto'
import * as v from 'valibot'
import { SourceInputError, defineIntakeSource, type IntakeSourceDefinition } from '../../../core/registry.ts'
import { formatIssues } from '../../../core/config/issues.ts'
import type { Confirmation } from '../../../core/delivery/types.ts'
import { strictOptions } from '../../../core/options.ts'
import { ConversionRequest, toConversionInput } from '../../../core/intake/conversion-request.ts'
import { clipped, compact } from '../fields.ts'
import { readJsonObject } from '../json-body.ts'
import { secretSchema } from '../options.ts'
import { headerValue, hmacSha256, signaturesEqual } from '../signature.ts'
import { isRefundEvent, toAutomationRefund } from '../../../core/intake/refund-request.ts'

export const AUTOMATION_TOOLS = ['zapier', 'make', 'n8n'] as const
export type AutomationTool = typeof AUTOMATION_TOOLS[number]

const SIGNATURE_HEADER = ['X-Dcgate-Signature'] as const
const CONFIRMATIONS = ['payment_confirmed', 'crm_qualified', 'tracked'] as const satisfies readonly Confirmation[]
const Claim = v.picklist(CONFIRMATIONS, `must be one of ${CONFIRMATIONS.join(', ')}`)

/** `sites[].sources.<zapier|make|n8n>`: `{}` takes unsigned bodies only; with a secret, signed ones too. */
const options = strictOptions({ secret: v.optional(secretSchema('secret your automation signs the body with')) }, 'an optional secret')
export type AutomationOptions = v.InferOutput<typeof options>

/**
 * Without a messageId, the id is derived from the exact bytes: a tool retrying the same delivery sends the same
 * bytes and is skipped as a duplicate, while a different body is a different conversion.
 */
export function derivedMessageId(raw: Uint8Array): string {
  return `body-${createHash('sha256').update(raw).digest('hex').slice(0, 32)}`
}

export function createAutomationSource(name: AutomationTool): IntakeSourceDefinition<AutomationOptions> {
  return defineIntakeSource<AutomationOptions>({
    name,
    options,
    signature: 'optional',
    confirmation: 'tracked',
    isSigned: (headers) => headerValue(headers, SIGNATURE_HEADER) !== undefined,
    // `sha256=<hex HMAC-SHA256 of the raw body>`; with no secret configured a signature cannot be checked, so it fails.
    verify: (raw, headers, { secret }) => {
      const received = headerValue(headers, SIGNATURE_HEADER)?.match(/^sha256=(.*)$/i)?.[1]
      return secret !== undefined && received !== undefined && signaturesEqual(hmacSha256(secret, raw).toString('hex'), received.trim().toLowerCase())
    },
    parse: (raw) => {
      const body = readJsonObject(raw)
      if (isRefundEvent(body)) return { kind: 'refund', refund: toAutomationRefund(body, derivedMessageId(raw)), sourceEventType: clipped(String(body.event).trim(), 64) }
      const result = v.safeParse(ConversionRequest, body)
      if (!result.success) {
        const problems = formatIssues(result.issues)
        throw new SourceInputError(problems.join('; '), problems)
      }
      const claim = v.safeParse(Claim, result.output.properties?.confirmation)
      const confirmation = result.output.properties?.confirmation === undefined ? undefined : claim.success ? claim.output : invalidClaim(claim.issues)
      const input = toConversionInput(result.output)
      const conversion = compact({ ...input, messageId: input.messageId ?? derivedMessageId(raw), messageIdGenerated: input.messageId === undefined || undefined, confirmation })
      // The event names the webhook's type (conversions.source_event_type holds 64 characters; the event up to 255).
      return { kind: 'conversions', conversions: [conversion], sourceEventType: clipped(input.event, 64) }
    },
  })
}

function invalidClaim(issues: readonly v.BaseIssue<unknown>[]): never {
  const problems = formatIssues(issues, 'properties.confirmation')
  throw new SourceInputError(problems.join('; '), problems)
}

export const zapier = createAutomationSource('zapier')
export const make = createAutomationSource('make')
export const n8n = createAutomationSource('n8n')

/** The three definitions, for adapters/index.ts. */
export default [zapier, make, n8n] as const
