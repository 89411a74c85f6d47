import { it, expect } from 'vitest'
import { CORE_INDEX_URL, sleep, startServerProcess } from '../test/helpers/server-process.ts'
const CONFIG = `import { defineConfig, definePlugin } from '${CORE_INDEX_URL}'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
export default defineConfig({ plugins: ['export', definePlugin({ name: 'slow', setup(ctx) { ctx.hooks.hook('app:close', () => console.log('app:close at', Date.now())); ctx.app.get('/slow', async () => { ctx.logger.info('slow request started'); await sleep(1500); return { done: true } }) } })], sites: [{ id: 'demo', name: 'Demo' }] })
`
for (const mode of ['fetch', 'close']) it('timing ' + mode, async () => {
  const s = await startServerProcess({ config: CONFIG })
  const t0 = Date.now()
  const slow = fetch(`${s.url}/slow`, mode === 'close' ? { headers: { connection: 'close' } } : {}).then(async (r) => { const b = await r.json(); console.log('slow done', Date.now() - t0, r.headers.get('connection'), r.headers.get('keep-alive')); return b })
  await s.waitForOutput(/slow request started/)
  await sleep(200)
  console.log('signal', Date.now() - t0)
  const code = await s.stop()
  console.log('exit', code, Date.now() - t0)
  console.log(s.stdout.split('\n').filter(l => /app:close/.test(l)).map(l => Number(l.split(' ').pop()) - t0))
  await slow
  await s.close()
}, 60000)
