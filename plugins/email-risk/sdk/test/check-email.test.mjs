// The package's own tests, run against the built package by its name (`npm test` after `npm run build`, or in any
// folder where the tarball is installed). Node's test runner only: no dependency. A local HTTP server stands in for
// dcgate; with DCGATE_TEST_URL and DCGATE_TEST_KEY set, one more test asks a real dcgate.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { after, before, test } from 'node:test'
import { DCService, DCServiceError, DCServiceNetworkError, DCServiceTimeoutError, DCServiceValidationError, SDK_VERSION } from '@dcgate/node-sdk'

const ANSWER = { success: true, data: { emailInfo: { normalized_email: 'john.doe@gmial.com', action: 'CHALLENGE', suggestion: 'john.doe@gmail.com', reasons: ['typo'] }, userInfo: null } }
const requests = []
let server
let baseUrl

before(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body })
      if (req.headers['x-dc-key'] === 'slow') return void setTimeout(() => res.end('{}'), 2000)
      const ok = req.headers['x-dc-key'] === 'dcp_good'
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? ANSWER : { message: 'Invalid API key' }))
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${server.address().port}`
})
after(() => {
  server.closeAllConnections()
  server.close()
})

test('the version it reports is the package version', () => {
  assert.equal(SDK_VERSION, createRequire(import.meta.url)('@dcgate/node-sdk/package.json').version)
})

test('posts the trimmed email with the key and returns emailInfo and userInfo', async () => {
  const result = await new DCService({ apiKey: 'dcp_good', baseUrl: `${baseUrl}/` }).checkEmail('  john.doe@gmial.com ')
  assert.deepEqual(result, { emailInfo: ANSWER.data.emailInfo, userInfo: null })
  const sent = requests.at(-1)
  assert.equal(sent.method, 'POST')
  assert.equal(sent.url, '/api/v1/services/email/check')
  assert.equal(sent.headers['x-dc-key'], 'dcp_good')
  assert.deepEqual(JSON.parse(sent.body), { email: 'john.doe@gmial.com' })
})

test('a refused key is a DCServiceError with the status and the body', async () => {
  await assert.rejects(new DCService({ apiKey: 'dcp_bad', baseUrl }).checkEmail('ann@example.com'), (error) => {
    assert.ok(error instanceof DCServiceError)
    assert.equal(error.status, 401)
    assert.deepEqual(error.body, { message: 'Invalid API key' })
    return true
  })
})

test('not an email: DCServiceValidationError and no request', async () => {
  const before = requests.length
  await assert.rejects(new DCService({ apiKey: 'dcp_good', baseUrl }).checkEmail('not-an-email'), DCServiceValidationError)
  assert.throws(() => new DCService({ apiKey: '' }), DCServiceValidationError)
  assert.equal(requests.length, before)
})

test('a slow answer is a DCServiceTimeoutError, a closed port a DCServiceNetworkError', async () => {
  await assert.rejects(new DCService({ apiKey: 'slow', baseUrl, timeout: 100 }).checkEmail('ann@example.com'), DCServiceTimeoutError)
  await assert.rejects(new DCService({ apiKey: 'dcp_good', baseUrl: 'http://127.0.0.1:9' }).checkEmail('ann@example.com'), DCServiceNetworkError)
})

test('asks a real dcgate when DCGATE_TEST_URL and DCGATE_TEST_KEY are set', { skip: !process.env.DCGATE_TEST_URL || !process.env.DCGATE_TEST_KEY }, async () => {
  const result = await new DCService({ apiKey: process.env.DCGATE_TEST_KEY, baseUrl: process.env.DCGATE_TEST_URL, timeout: 20_000 }).checkEmail('john.doe@gmial.com')
  assert.equal(result.emailInfo.suggestion, 'john.doe@gmail.com')
  assert.ok(['ALLOW', 'CHALLENGE', 'BLOCK'].includes(result.emailInfo.action))
})
