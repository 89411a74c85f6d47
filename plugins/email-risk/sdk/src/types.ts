/** The email check result (dcgate spec "Email check result"; docs/api/email-check.md). */
export interface EmailInfo {
  normalized_email: string
  domain: string
  action: 'ALLOW' | 'CHALLENGE' | 'BLOCK'
  /** 0–100 */
  risk_score: number
  risk_label: 'low' | 'medium' | 'high' | 'critical'
  /** One sentence per signal that fired; `tags[i]` is the stable code of `reasons[i]`. */
  reasons: string[]
  tags: string[]
  /** The address with the likely intended domain (john.doe@gmial.com → john.doe@gmail.com), else null. */
  suggestion: string | null
  fraud_signals: {
    disposable_domain: boolean
    /** A domain reserved by RFC 2606 (example.com, .test, .example, .invalid, .localhost): no real mailbox. */
    reserved_domain: boolean
    identity_flags: { gibberish_username: boolean, bulk_pattern: boolean, plus_addressing: boolean, free_provider: boolean }
    domain_maturity: { age_days: number | null, registered_at: string | null, young_domain: boolean | null }
    mail_server: 'mx' | 'implicit' | 'none' | 'unknown'
  }
  digital_footprint: { likely_real_person: boolean }
  checked_at: string
  answered_from: 'stored' | 'live'
}

export interface DeviceFingerprint {
  hash: string
  short: string
  confidence: number | null
  version: number | null
}

/** Null until the email was identified on the site. */
export interface UserInfo {
  related_emails: string[]
  related_email_count: number
  deviceFingerprint: DeviceFingerprint | null
  source: string
  first_seen_at: string
}

export interface EmailCheckResult {
  emailInfo: EmailInfo
  userInfo: UserInfo | null
}

export interface DCServiceOptions {
  /** The site's private key (x-dc-key). Server-side only: never ship it to a browser or an app. */
  apiKey: string
  /** ms before DCServiceTimeoutError; default 10000. */
  timeout?: number
  /** Your dcgate server, e.g. https://track.example.com; default DCGATE_URL from the environment, else http://localhost:3000. */
  baseUrl?: string
}

export interface CheckEmailOptions {
  /** Aborts the check (DCServiceAbortError). */
  signal?: AbortSignal
}
