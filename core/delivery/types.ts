/**
 * The shapes adapters exchange with the delivery pipeline. The kernel fixes their outline so the
 * registry can type adapters; the intake issue fills in the pipeline that produces and consumes them.
 */

/** A conversion ready for delivery: personal data already normalised and hashed. */
export interface ConversionEvent {
  messageId: string
  siteId: string
  /** The site's event key as received. */
  event: string
  /** The standard conversion it is delivered as (Purchase, Lead, CompleteRegistration, Schedule). */
  sendsAs: string
  /** When the conversion happened. */
  occurredAt: Date
  properties: Record<string, unknown>
  /** SHA-256 hex of normalised values, keyed by trait name (email, phone, first_name, ...). */
  hashedTraits: Record<string, string>
  clickIds: Record<string, string>
  ip?: string
  userAgent?: string
  confirmation: 'payment_confirmed' | 'crm_qualified' | 'tracked'
}

/** One HTTP call to a platform, produced by an adapter's pure mapping. */
export interface PlatformRequest {
  url: string
  method: 'POST' | 'PUT' | 'GET'
  headers: Record<string, string>
  body: string
}

/** What happened to one event at one platform. */
export type DeliveryOutcome =
  | { status: 'sent' }
  | { status: 'rejected', reason: string }
  | { status: 'retry', reason: string, retryAfterMs?: number }
