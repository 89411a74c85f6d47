import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { resolveConfig } from '../../core/config/load.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { REPO_ROOT } from '../helpers/server-process.ts'

// The image's build files (issue 26). test/container/run.sh builds and runs the image; these checks are the quick
// ones every suite run makes, so the two names a builder may look for never drift apart.
const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8')

describe('the container build files', () => {
  afterEach(() => vi.unstubAllEnvs())

  it('Dockerfile is the Containerfile, and .dockerignore the .containerignore', () => {
    expect(read('Dockerfile')).toBe(read('Containerfile'))
    expect(read('.dockerignore')).toBe(read('.containerignore'))
  })

  it('the image builds from the official Node 24 slim image and starts dcgate as its own PID 1, as a non-root user', () => {
    const file = read('Containerfile')
    expect([...file.matchAll(/^FROM (\S+)/gm)].map((m) => m[1])).toEqual(['docker.io/library/node:24-bookworm-slim', 'docker.io/library/node:24-bookworm-slim'])
    expect(file).toMatch(/^RUN npm ci --omit=dev /m)
    expect(file).toMatch(/^USER node$/m)
    expect(file).toMatch(/^VOLUME \["\/data"\]$/m)
    expect(file).toMatch(/^HEALTHCHECK .*\n.*\/livez/m)
    expect(file).toMatch(/^CMD \["node", "bin\/dcgate\.mjs", "start"\]$/m)
  })

  it('the build context leaves out what the image never needs', () => {
    const ignored = read('.containerignore').split('\n').filter((line) => line && !line.startsWith('#'))
    expect(ignored).toEqual(expect.arrayContaining(['.git', 'node_modules', '.data', 'test']))
  })

  it('compose.yaml starts the shipped config behind Caddy: the same sites, the proxy trusted from private addresses only', async () => {
    vi.stubEnv('DCGATE_BASE_URL', 'https://dcgate.example')
    const [{ default: compose }, { default: shipped }] = await Promise.all([import('../../config/compose.config.ts'), import('../../config/dcgate.config.ts')])
    const resolved = resolveConfig(compose, {}, builtInPlugins)
    expect(resolved.sites.map((site) => site.id)).toEqual(shipped.sites!.map((site) => site.id))
    expect(resolved.server.trustProxy).toEqual(resolveConfig({ server: { trustProxy: ['private'] } }, {}).server.trustProxy)
    expect(resolved.server.baseUrl).toBe('https://dcgate.example')
    expect(read('compose.yaml')).toContain('DCGATE_CONFIG: /app/config/compose.config.ts')
  })
})
