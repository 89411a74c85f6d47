import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import type { H3 } from 'h3'
import { createOpenApiDocument } from './openapi.ts'
import type { RouteTable } from './routes.ts'

const SCALAR_FILE = new URL('./vendor/scalar-standalone.js', import.meta.url)

// Scalar is configured to stay offline: no proxy, no fonts, no telemetry, no AI agent.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>dcgate API reference</title>
</head>
<body>
  <div id="app"></div>
  <script src="/docs/scalar.js"></script>
  <script>
    Scalar.createApiReference('#app', { url: '/openapi.json', withDefaultFonts: false, hideClientButton: false,
      telemetry: false, showDeveloperTools: 'never', agent: { disabled: true }, proxyUrl: undefined })
  </script>
</body>
</html>`

/** GET /openapi.json (built from the route table on first request) and GET /docs (Scalar, vendored). */
export function installApiReference(app: H3, routes: RouteTable, info: { version: string, serverUrl: string }): void {
  let document: string | undefined
  app.get('/openapi.json', (event) => {
    document ??= JSON.stringify(createOpenApiDocument(routes.list(), info))
    event.res.headers.set('content-type', 'application/json;charset=UTF-8')
    return document
  })
  app.get('/docs', (event) => {
    event.res.headers.set('content-type', 'text/html;charset=UTF-8')
    return PAGE
  })
  let script: { body: Buffer, etag: string } | undefined
  app.get('/docs/scalar.js', (event) => {
    if (!script) {
      const body = readFileSync(SCALAR_FILE)
      script = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` }
    }
    event.res.headers.set('content-type', 'text/javascript;charset=UTF-8')
    event.res.headers.set('cache-control', 'public, max-age=86400')
    event.res.headers.set('etag', script.etag)
    if (event.req.headers.get('if-none-match') === script.etag) {
      event.res.status = 304
      return null
    }
    return new Uint8Array(script.body)
  })
}
