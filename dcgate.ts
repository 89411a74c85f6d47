// The composition root: which plugins and adapters this build of dcgate has. The kernel (core/) knows none of them;
// it gets both lists from here. `npm start`, `npm run dcgate` and the `dcgate` command (bin/dcgate.mjs) run this file.
// The lists are imported when a command needs them (start, migrate), so the admin commands start fast.
import { runCli } from './core/cli/main.ts'

await runCli(process.argv.slice(2), {
  async load() {
    const [{ builtInPlugins }, { adapters }] = await Promise.all([import('./plugins/index.ts'), import('./adapters/index.ts')])
    return { plugins: builtInPlugins, adapters }
  },
  updateData: async (options) => (await import('./plugins/capture/intel/update.ts')).updateVisitData(options),
})
