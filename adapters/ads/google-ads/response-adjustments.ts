/**
 * Pure: Google's answer to UploadConversionAdjustments → one outcome per refund, in request order. The same partial
 * failure model as click uploads (response-upload-clicks.ts), with the adjustment errors of
 * conversion_adjustment_upload_error.proto (v26).
 */
import type { AdjustmentEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { parseUploadAnswer, type UploadRules } from './response-upload-clicks.ts'

const HOUR_MS = 3_600_000
const code = (name: string) => `conversionAdjustmentUploadError.${name}`

const ADJUSTMENTS: UploadRules = {
  rows: ['conversion_adjustments', 'conversionAdjustments'],
  // A retried retraction or restatement that Google already applied.
  alreadyDone: new Set([code('CONVERSION_ALREADY_RETRACTED'), code('RESTATEMENT_ALREADY_EXISTS')]),
  later: new Map([
    // The conversion went through the Data Manager API, which Google processes after answering: a refund soon after
    // may not find it yet. Tried again an hour later, until the attempts run out.
    [code('CONVERSION_NOT_FOUND'), HOUR_MS],
    [code('TOO_RECENT_CONVERSION_ACTION'), 6 * HOUR_MS],
  ]),
}

export function parseAdjustmentsResponse(response: PlatformResponse, items: readonly AdjustmentEvent[]): DeliveryOutcome[] {
  return parseUploadAnswer(response, items.length, ADJUSTMENTS)
}
