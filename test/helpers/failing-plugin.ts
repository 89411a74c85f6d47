import type { ErrorContext } from '../../core/hooks.ts'
import { definePlugin } from '../../core/plugin.ts'

/** A plugin with one GET route at `path` whose handler throws; what the `error` hook is given goes to `reported`. */
export function failingPlugin(path: string, reported: ErrorContext[] = []) {
  return definePlugin({
    name: 'failing',
    setup(ctx) {
      ctx.routes.add({ method: 'GET', path, auth: 'none', summary: 'Fails', handler: () => {
        throw new Error('the handler failed')
      } })
      ctx.hooks.hook('error', (_error, context) => void reported.push(context))
    },
  })
}
