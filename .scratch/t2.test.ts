import { it } from 'vitest'
import { startServerProcess } from '../test/helpers/server-process.ts'
it('timing idle', async () => {
  const s = await startServerProcess({})
  const t0 = Date.now()
  const code = await s.stop()
  console.log('exit', code, Date.now() - t0)
  await s.close()
}, 60000)
it('timing idle with keepalive conn', async () => {
  const s = await startServerProcess({})
  await (await fetch(`${s.url}/openapi.json`)).text()
  const t0 = Date.now()
  const code = await s.stop()
  console.log('exit2', code, Date.now() - t0)
  await s.close()
}, 60000)
