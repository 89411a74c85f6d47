import { it } from 'vitest'
import http from 'node:http'
import { CORE_INDEX_URL, sleep, startServerProcess } from '../test/helpers/server-process.ts'
const CONFIG = `import { defineConfig, definePlugin } from '${CORE_INDEX_URL}'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
export default defineConfig({ plugins: ['export', definePlugin({ name: 'slow', setup(ctx) { ctx.app.get('/slow', async () => { ctx.logger.info('slow request started'); await sleep(1500); return { done: true } }) } })], sites: [{ id: 'demo', name: 'Demo' }] })
`
it('keepalive after SIGTERM', async () => {
  const s = await startServerProcess({ config: CONFIG })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const get = (path: string) => new Promise<string>((resolve) => {
    const req = http.get(`${s.url}${path}`, { agent }, (res) => { res.resume(); res.on('end', () => resolve(`${res.statusCode} ${res.headers.connection} reused=${req.reusedSocket}`)) })
    req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`))
  })
  const t0 = Date.now()
  const slow = get('/slow')
  await s.waitForOutput(/slow request started/)
  s.child.kill('SIGTERM')
  let exited = false
  s.child.once('exit', (code) => { exited = true; console.log('exited at', Date.now() - t0, code) })
  console.log('slow', await slow, Date.now() - t0)
  for (let i = 0; i < 15 && !exited; i++) {
    await sleep(700)
    console.log(Date.now() - t0, await get('/openapi.json'))
  }
  console.log('exited?', exited)
  await s.close()
}, 60000)
