// The composition root: which plugins and adapters this build of dcgate has. The kernel (core/) knows none of them;
// it gets both lists from here. `npm start`, `npm run dcgate` and the `dcgate` command (bin/dcgate.mjs) run this file.
import { runCli } from './core/cli/main.ts'
import { adapters } from './adapters/index.ts'
import { builtInPlugins } from './plugins/index.ts'

await runCli(process.argv.slice(2), {
  plugins: builtInPlugins,
  adapters,
  updateData: async (options) => (await import('./plugins/capture/intel/update.ts')).updateVisitData(options),
})
