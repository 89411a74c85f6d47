/**
 * Google's own words for the ProcessingErrorReason and ProcessingWarningReason values a request status reports
 * (google/ads/datamanager/v1/processing_errors.proto, googleapis/googleapis, read 2026-11-28), for the delivery report.
 * A value not listed here is shown by its name alone.
 */
const WORDS: Record<string, string> = {
  PROCESSING_ERROR_REASON_INVALID_CUSTOM_VARIABLE: 'The custom variable is invalid.',
  PROCESSING_ERROR_REASON_CUSTOM_VARIABLE_NOT_ENABLED: 'The status of the custom variable is not enabled.',
  PROCESSING_ERROR_REASON_EVENT_TOO_OLD: 'The conversion is older than max supported age.',
  PROCESSING_ERROR_REASON_DENIED_CONSENT: 'The ad user data is denied, either by the user or in the advertiser default settings.',
  PROCESSING_ERROR_REASON_NO_CONSENT: 'Advertiser did not give 3P consent for the Ads core platform services.',
  PROCESSING_ERROR_REASON_UNKNOWN_CONSENT: 'The overall consent (determined from row level consent, request level consent, and account settings) could not be determined for this user',
  PROCESSING_ERROR_REASON_DUPLICATE_GCLID: 'A conversion with the same GCLID and conversion time already exists in the system.',
  PROCESSING_ERROR_REASON_DUPLICATE_TRANSACTION_ID: 'A conversion with the same order id and conversion action combination was already uploaded.',
  PROCESSING_ERROR_REASON_INVALID_GBRAID: 'The gbraid could not be decoded.',
  PROCESSING_ERROR_REASON_INVALID_GCLID: 'The google click ID could not be decoded.',
  PROCESSING_ERROR_REASON_INVALID_MERCHANT_ID: 'Merchant id contains non-digit characters.',
  PROCESSING_ERROR_REASON_INVALID_WBRAID: 'The wbraid could not be decoded.',
  PROCESSING_ERROR_REASON_INTERNAL_ERROR: 'Internal error.',
  PROCESSING_ERROR_REASON_DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED: 'Enhanced conversions terms are not signed in the destination account.',
  PROCESSING_ERROR_REASON_INVALID_EVENT: 'The event is invalid.',
  PROCESSING_ERROR_REASON_INSUFFICIENT_MATCHED_TRANSACTIONS: 'The matched transactions are less than the minimum threshold.',
  PROCESSING_ERROR_REASON_INSUFFICIENT_TRANSACTIONS: 'The transactions are less than the minimum threshold.',
  PROCESSING_ERROR_REASON_INVALID_FORMAT: 'The event has format error.',
  PROCESSING_ERROR_REASON_DECRYPTION_ERROR: 'The event has a decryption error.',
  PROCESSING_ERROR_OPERATING_ACCOUNT_MISMATCH_FOR_AD_IDENTIFIER: 'The user attempted to ingest events with an ad identifier that isn\'t from the operating account\'s ads.',
  PROCESSING_WARNING_REASON_INTERNAL_ERROR: 'Internal error.',
}

export function processingReason(reason: string): string | undefined {
  return WORDS[reason]
}
