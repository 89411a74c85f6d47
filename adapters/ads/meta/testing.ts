/**
 * "Test connection" and "Send test event" (dashboard Setup page): reading the pixel (dataset) node, which changes
 * nothing, and the Conversions API's own test mode, `test_event_code` (README "Testing from the dashboard").
 */
import type { ConnectionTest, TestEventSupport } from '../../../core/registry.ts'
import { parseJsonObject } from '../../shared/helpers.ts'
import { codedTestMode } from '../../shared/test-code.ts'
import { META_GRAPH_URL, type MetaOptions } from './map.ts'
import { META_API_VERSION } from './version.ts'

export const metaConnectionTest: ConnectionTest<MetaOptions> = {
  // GET /{ads-pixel-id}: the Ads Pixel node; `fields=id,name` keeps the answer to what the page shows.
  toRequest: (options) => ({
    url: `${(options.baseUrl ?? META_GRAPH_URL).replace(/\/+$/, '')}/${META_API_VERSION}/${encodeURIComponent(options.pixelId)}?fields=id,name`,
    method: 'GET',
    headers: { Authorization: `Bearer ${options.accessToken}` },
    body: '',
  }),
  parseResponse: (response) => {
    const body = parseJsonObject(response.body)
    if (response.status === 200 && typeof body?.id === 'string') return { ok: true, message: `pixel ${body.id}${typeof body.name === 'string' ? ` “${body.name}”` : ''} is readable with this token` }
    const error = body?.error as { message?: unknown, code?: unknown } | undefined
    return { ok: false, message: typeof error?.message === 'string' ? `${error.message}${error.code !== undefined ? ` (code ${String(error.code)})` : ''}` : `HTTP ${response.status}` }
  },
}

export const metaTestEvents: TestEventSupport<MetaOptions> = codedTestMode('testEventCode', 'Test event code (Events Manager → Test events)', 'Meta needs the test event code shown in Events Manager → Test events')
