import { describe, expect, it } from 'vitest'
import { definePlugin, resolvePlugins, type PluginDefinition } from '../../core/plugin.ts'
import { callHookSafe } from '../../core/hooks.ts'
import { BootError } from '../../core/errors.ts'
import { bootTestApp } from '../helpers/app.ts'

declare module '../../core/hooks.ts' {
  interface DcgateHooks {
    'test:ping': (payload: { seen: string[] }) => void | Promise<void>
  }
}

const noop = (name: string, dependencies?: string[]) => definePlugin({ name, dependencies, setup: () => {} })

describe('plugin resolution', () => {
  const builtIns = { a: noop('a'), b: noop('b', ['a']) }

  it('keeps config order and accepts inline definitions', () => {
    const inline = noop('mine', ['b'])
    expect(resolvePlugins(['a', 'b', inline], builtIns).map((p) => p.name)).toEqual(['a', 'b', 'mine'])
  })

  it('defaults to every built-in plugin', () => {
    expect(resolvePlugins(undefined, builtIns).map((p) => p.name)).toEqual(['a', 'b'])
  })

  it('stops on an unknown plugin, naming it and the known ones', () => {
    expect(() => resolvePlugins(['a', 'nope'], builtIns)).toThrow(BootError)
    expect(() => resolvePlugins(['a', 'nope'], builtIns)).toThrow('Unknown plugin "nope"')
  })

  it('stops on a missing dependency, and on one listed after its dependent', () => {
    expect(() => resolvePlugins(['b'], builtIns)).toThrow('Plugin "b" depends on "a"')
    try {
      resolvePlugins(['b', 'a'], builtIns)
    }
    catch (error) {
      expect((error as BootError).details).toEqual(['list "a" before "b" in plugins'])
    }
  })

  it('stops on a plugin listed twice', () => {
    expect(() => resolvePlugins(['a', 'a'], builtIns)).toThrow('listed twice')
  })
})

describe('plugin setup', () => {
  it('runs setups in config order', async () => {
    const order: string[] = []
    const plugin = (name: string): PluginDefinition => definePlugin({ name, setup: () => void order.push(name) })
    const app = await bootTestApp({ plugins: [plugin('first'), plugin('second'), 'export', plugin('third')] })
    await app.close()
    expect(order).toEqual(['first', 'second', 'third'])
  })

  it('stops boot with the plugin name when its setup throws', async () => {
    const broken = definePlugin({ name: 'broken', setup: () => { throw new Error('no licence key') } })
    const failure = bootTestApp({ plugins: ['export', broken] })
    await expect(failure).rejects.toThrow('Plugin "broken" failed to set up')
    await expect(failure).rejects.toMatchObject({ details: ['no licence key'] })
  })
})

describe('hooks on the request path', () => {
  it('a throwing listener is reported to the error hook, the others still run, and the response is intact', async () => {
    const errors: { error: unknown, source: string }[] = []
    const listeners = definePlugin({
      name: 'listeners',
      setup({ hooks }) {
        hooks.hook('test:ping', ({ seen }) => void seen.push('before'))
        hooks.hook('test:ping', () => { throw new Error('listener exploded') })
        hooks.hook('test:ping', ({ seen }) => void seen.push('after'))
        hooks.hook('error', (error, context) => void errors.push({ error, source: context.source }))
      },
    })
    const route = definePlugin({
      name: 'route',
      setup({ routes, hooks, logger }) {
        routes.add({
          method: 'GET', path: '/ping', auth: 'none', summary: 'ping',
          handler: async () => {
            const payload = { seen: [] as string[] }
            const ok = await callHookSafe(hooks, logger, 'test:ping', payload)
            return { ok, seen: payload.seen }
          },
        })
      },
    })
    const app = await bootTestApp({ plugins: [listeners, route] })
    try {
      const response = await app.request('/ping')
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ ok: false, seen: ['before', 'after'] })
      expect(errors).toHaveLength(1)
      expect(errors[0]!.source).toBe('hook:test:ping')
      expect((errors[0]!.error as Error).message).toBe('listener exploded')
    }
    finally {
      await app.close()
    }
  })

  it('an unexpected error in a handler answers a 500 without internals and reaches the error hook', async () => {
    const errors: string[] = []
    const plugin = definePlugin({
      name: 'crashy',
      setup({ app, hooks }) {
        hooks.hook('error', (error, context) => void errors.push(`${context.path}: ${(error as Error).message}`))
        app.get('/crash', () => { throw new Error('secret internal detail') })
      },
    })
    const app = await bootTestApp({ plugins: [plugin] })
    try {
      const response = await app.request('/crash')
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({ message: 'Internal server error' })
      expect(errors).toEqual(['/crash: secret internal detail'])
    }
    finally {
      await app.close()
    }
  })

  it('app:ready runs after every setup, app:close on close', async () => {
    const events: string[] = []
    const plugin = definePlugin({
      name: 'lifecycle',
      setup({ hooks }) {
        events.push('setup')
        hooks.hook('app:ready', () => void events.push('ready'))
        hooks.hook('app:close', () => void events.push('close'))
      },
    })
    const app = await bootTestApp({ plugins: [plugin] })
    expect(events).toEqual(['setup', 'ready'])
    await app.close()
    await app.dcgate.close()
    expect(events).toEqual(['setup', 'ready', 'close'])
  })
})
