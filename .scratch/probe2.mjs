import { register } from 'tsx/esm/api'
import { register as registerCjs } from 'tsx/cjs/api'
registerCjs(); register()
const { loadConfigFile } = await import('../core/config/load.ts')
for (const f of process.argv.slice(2)) {
  try { const c = await loadConfigFile(f, {}); console.log(f, 'OK sites=', c.sites.map(s=>s.id), 'plugins=', c.plugins) } catch (e) { console.log(f, 'ERR', e.message, e.details) }
}
