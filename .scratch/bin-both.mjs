import { register } from 'tsx/esm/api'
import { register as registerCjs } from 'tsx/cjs/api'
registerCjs()
register()
await import('../core/cli/main.ts')
