import { it } from 'vitest'
import { startServerProcess } from '../test/helpers/server-process.ts'
it('boot timing', async () => {
  for (let i = 0; i < 3; i++) {
    const t0 = Date.now()
    const s = await startServerProcess({})
    console.log('boot', Date.now() - t0)
    const t1 = Date.now()
    await s.stop(); console.log('stop', Date.now() - t1)
    const t2 = Date.now()
    await s.restart(); console.log('reboot', Date.now() - t2)
    await s.close()
  }
}, 120000)
