import { DCServiceAbortError, DCServiceError, DCServiceNetworkError, DCServiceTimeoutError, DCServiceValidationError } from './errors.js'
import type { CheckEmailOptions, DCServiceOptions, EmailCheckResult } from './types.js'
import { SDK_VERSION } from './version.js'

export { DCServiceAbortError, DCServiceBaseError, DCServiceError, DCServiceNetworkError, DCServiceTimeoutError, DCServiceValidationError } from './errors.js'
export type { CheckEmailOptions, DCServiceOptions, DeviceFingerprint, EmailCheckResult, EmailInfo, UserInfo } from './types.js'
export { SDK_VERSION } from './version.js'

const DEFAULT_TIMEOUT = 10_000
const CHECK_PATH = '/api/v1/services/email/check'
/** The shape dcgate accepts: one local part (≤ 64), one @, dotted domain labels ending in 2+ characters. */
const EMAIL_SHAPE = /^[^\s@]{1,64}@(?:[^\s@.]+\.)+[^\s@.]{2,}$/u

/**
 * dcgate's email risk check from your server: `new DCService({ apiKey }).checkEmail(email)`.
 * One call per sign-up attempt; act on `emailInfo.action`; fail open on a timeout (README.md).
 */
export class DCService {
  readonly #apiKey: string
  readonly #timeout: number
  readonly #url: string

  constructor(options: DCServiceOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey.trim() === '') throw new DCServiceValidationError('apiKey is required (the site\'s private key)')
    const timeout = options.timeout ?? DEFAULT_TIMEOUT
    if (!Number.isFinite(timeout) || timeout <= 0) throw new DCServiceValidationError('timeout must be a positive number of milliseconds')
    const baseUrl = options.baseUrl ?? environment('DCGATE_URL') ?? 'http://localhost:3000'
    if (!/^https?:\/\//.test(baseUrl)) throw new DCServiceValidationError('baseUrl must start with http:// or https://')
    this.#apiKey = options.apiKey.trim()
    this.#timeout = timeout
    this.#url = `${baseUrl.replace(/\/+$/, '')}${CHECK_PATH}`
  }

  /**
   * Checks one email. Throws DCServiceValidationError before any request when it is not an email address,
   * DCServiceError when dcgate answers 4xx/5xx, DCServiceTimeoutError, DCServiceAbortError, DCServiceNetworkError.
   */
  async checkEmail(email: string, options: CheckEmailOptions = {}): Promise<EmailCheckResult> {
    const trimmed = typeof email === 'string' ? email.trim() : ''
    if (!trimmed) throw new DCServiceValidationError('email is required')
    if (trimmed.length > 320 || !EMAIL_SHAPE.test(trimmed.replace(/\s+/gu, ''))) throw new DCServiceValidationError(`Not an email address: "${trimmed.slice(0, 100)}"`)
    const { signal } = options
    if (signal?.aborted) throw new DCServiceAbortError(signal.reason)

    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.#timeout)
    const onAbort = () => controller.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    const failure = (error: unknown) => {
      if (timedOut) return new DCServiceTimeoutError(this.#timeout)
      if (signal?.aborted) return new DCServiceAbortError(signal.reason)
      return new DCServiceNetworkError(error)
    }
    try {
      let response: Response
      let text: string
      try {
        response = await fetch(this.#url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'accept': 'application/json', 'x-dc-key': this.#apiKey, 'user-agent': `dcgate-node-sdk/${SDK_VERSION}` },
          body: JSON.stringify({ email: trimmed }),
          signal: controller.signal,
        })
        text = await response.text()
      }
      catch (error) {
        throw failure(error)
      }
      const body = parseJson(text)
      if (!response.ok) throw new DCServiceError(response.status, body ?? text)
      const data = (body as { data?: EmailCheckResult } | undefined)?.data
      if (!data?.emailInfo) throw new DCServiceError(response.status, body ?? text)
      return { emailInfo: data.emailInfo, userInfo: data.userInfo ?? null }
    }
    finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  }
  catch {
    return undefined
  }
}

function environment(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name] || undefined
}
