import { execFile, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { childEnv, freePort, REPO_ROOT, sleep, tempDir } from '../helpers/server-process.ts'
import { createClusterDatabase } from './services.ts'

// docs/deployment.md promises that every command it shows is run by the cluster test or by this test. Each shell
// line of the page must be listed below with how it is checked; a line added to the page without a check fails.
const run = promisify(execFile)
const DOC = readFileSync(join(REPO_ROOT, 'docs/deployment.md'), 'utf8')
const CLUSTER_SOURCES = ['instances.ts', 'services.ts', 'three-instances.cluster.ts'].map((f) => readFileSync(join(REPO_ROOT, 'test/cluster', f), 'utf8')).join('\n')
const CONTAINER_SOURCES = ['run.sh', 'lib.sh'].map((f) => readFileSync(join(REPO_ROOT, 'test/container', f), 'utf8')).join('\n')

type Check =
  /** Run here, with the page's paths pointed at a scratch copy and DATABASE_URL at a database of this run. */
  | { run: true }
  /** Changes the machine (users, systemd, /etc): its program must exist, and the files it names. */
  | { exists: string }
  /** The cluster test runs it: these words are in its source. */
  | { cluster: string[] }
  /** The container test (test/container/run.sh, npm run test:container) runs or checks it: these words are in its source. */
  | { container: string[] }

const CHECKS: Record<string, Check> = {
  'cp docs/deployment/compose.env.example .env': { exists: 'cp' },
  // No Docker daemon here: the container test builds the image compose.yaml builds, runs it, and checks the file.
  'docker compose up -d': { container: ['-f compose.yaml config', 'pm build --pull=never --format docker "${RUN_FLAGS[@]}" -f Containerfile'] },
  'docker compose exec dcgate node bin/dcgate.mjs keys create --site demo --name first': { container: ['exec "$name" node bin/dcgate.mjs', 'keys create --site demo'] },
  'systemd-analyze verify docs/deployment/dcgate.service': { run: true },
  'sudo useradd --system --home-dir /var/lib/dcgate --shell /usr/sbin/nologin dcgate': { exists: 'useradd' },
  'sudo cp docs/deployment/dcgate.service /etc/systemd/system/dcgate.service': { exists: 'cp' },
  'sudo systemctl daemon-reload': { exists: 'systemctl' },
  'sudo systemctl enable --now dcgate': { exists: 'systemctl' },
  'curl -fsS http://127.0.0.1:3000/readyz': { cluster: ['/readyz'] },
  'caddy validate --config docs/deployment/Caddyfile --adapter caddyfile': { run: true },
  'sudo cp docs/deployment/Caddyfile /etc/caddy/Caddyfile': { exists: 'cp' },
  'sudo systemctl reload caddy': { exists: 'systemctl' },
  'pg_dump --format=custom --file=dcgate.dump "$DATABASE_URL"': { run: true },
  'psql --quiet "$DATABASE_URL" -c \'drop schema public cascade\' -c \'create schema public\'': { run: true },
  'pg_restore --no-owner --dbname="$DATABASE_URL" dcgate.dump': { run: true },
  'tar -C /var/lib/dcgate -czf dcgate-data.tar.gz .': { run: true },
  'npm ci --omit=dev': { exists: 'npm' },
  'npx dcgate migrate': { run: true },
  'sudo systemctl restart dcgate': { exists: 'systemctl' },
  'caddy run --config docs/deployment/Caddyfile.cluster --adapter caddyfile': { cluster: ["'run', '--config', CLUSTER_CADDYFILE, '--adapter', 'caddyfile'", 'docs/deployment/Caddyfile.cluster'] },
  'psql "$DATABASE_URL" -c \'show max_wal_size\'': { run: true },
}

/** Every line of the page's ```sh blocks, in order (comments and blank lines left out). */
function shellLines(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((block) => block[1]!.split('\n'))
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
}

let scratch: string
let dataDir: string
let database: Awaited<ReturnType<typeof createClusterDatabase>> | undefined

beforeAll(async () => {
  if (!process.env.DATABASE_URL) throw new Error('The deployment doc test needs DATABASE_URL (it runs pg_dump, pg_restore and dcgate migrate)')
  scratch = tempDir('dcgate-deploy-doc-')
  dataDir = join(scratch, 'var-lib-dcgate')
  mkdirSync(dataDir)
  writeFileSync(join(dataDir, 'admin-token'), 'a-token-for-the-backup-test', { mode: 0o600 })
  database = await createClusterDatabase(process.env.DATABASE_URL)
})
afterAll(async () => {
  await database?.drop()
  if (scratch) rmSync(scratch, { recursive: true, force: true })
})

/** The page's line as it runs here: its repo paths absolute, the data dir a scratch one. */
function localised(line: string): string {
  return line.replaceAll('docs/deployment/', join(REPO_ROOT, 'docs/deployment/')).replaceAll('/var/lib/dcgate', dataDir)
}

describe('docs/deployment.md', () => {
  it('lists only commands this test or the cluster test checks, and every check is on the page', () => {
    const lines = shellLines(DOC)
    expect(lines.filter((line) => !(line in CHECKS))).toEqual([])
    expect(Object.keys(CHECKS).filter((command) => !lines.includes(command))).toEqual([])
  })

  it('links every file under docs/deployment/', () => {
    for (const file of readdirSync(join(REPO_ROOT, 'docs/deployment'))) expect(DOC).toContain(`(deployment/${file})`)
  })

  // In the page's order: migrate first, so the dump holds dcgate's tables and the restore puts them back.
  it.each(Object.entries(CHECKS).filter(([, check]) => 'run' in check).map(([command]) => command).sort((a, b) => order(a) - order(b)))('runs: %s', async (command) => {
    // `npx dcgate` in the release's folder (this checkout), as the page runs it in /opt/dcgate; the rest in a scratch one.
    const result = await run('bash', ['-c', localised(command)], {
      cwd: command.startsWith('npx dcgate') ? REPO_ROOT : scratch, timeout: 120_000,
      env: { ...process.env, DATABASE_URL: database!.url, DCGATE_DATA_DIR: dataDir, DCGATE_CONFIG: undefined, PORT: undefined },
    }).catch((error: { code?: number, stdout?: string, stderr?: string }) => error)
    expect(result, `${result.stdout ?? ''}${result.stderr ?? ''}`).not.toHaveProperty('code')
    if (command.startsWith('pg_restore')) {
      expect((await database!.query<{ n: number }>(`select count(*)::int as n from information_schema.tables where table_name = 'deliveries'`))[0]!.n).toBe(1)
    }
    if (command.startsWith('tar')) expect(existsSync(join(scratch, 'dcgate-data.tar.gz'))).toBe(true)
    if (command.includes('max_wal_size')) expect(result.stdout).toMatch(/max_wal_size\s*-+\s*\d+[kMG]B/)
  }, 150_000)

  it.each(Object.entries(CHECKS).flatMap(([command, check]) => ('exists' in check ? [[command, check.exists]] : [])))('exists: %s', async (command, program) => {
    await expect(run('bash', ['-c', `command -v ${program}`])).resolves.toBeTruthy()
    for (const path of command.split(' ').filter((word) => word.startsWith('docs/'))) expect(existsSync(join(REPO_ROOT, path))).toBe(true)
  })

  it.each(Object.entries(CHECKS).flatMap(([command, check]) => ('cluster' in check ? [[command, check.cluster]] : [])))('the cluster test runs: %s', (_command, needles) => {
    for (const needle of needles) expect(CLUSTER_SOURCES).toContain(needle)
  })

  it.each(Object.entries(CHECKS).flatMap(([command, check]) => ('container' in check ? [[command, check.container]] : [])))('the container test runs: %s', (_command, needles) => {
    for (const needle of needles) expect(CONTAINER_SOURCES).toContain(needle)
  })
})

describe('docs/deployment/dcgate.service', () => {
  it('starts dcgate as its ExecStart does, with its environment and the page\'s config, ready on /readyz, and stops on SIGTERM within TimeoutStopSec', async () => {
    const unit = serviceSection(readFileSync(join(REPO_ROOT, 'docs/deployment/dcgate.service'), 'utf8'))
    // The page's config file, with the release's path pointing at this checkout and one site.
    const [, snippet] = /```ts\n([\s\S]*?)```/.exec(DOC)!
    const configFile = join(scratch, 'dcgate.config.ts')
    writeFileSync(configFile, snippet!.replaceAll('/opt/dcgate/', REPO_ROOT).replace('sites: [/* ... */]', "sites: [{ id: 'shop', name: 'Shop' }]"))
    const port = await freePort()
    const env: Record<string, string> = { DATABASE_URL: database!.url, PORT: String(port) }
    for (const line of unit.Environment ?? []) {
      const [key, ...value] = line.split('=')
      env[key!] = value.join('=')
    }
    expect(env).toMatchObject({ DCGATE_CONFIG: '/etc/dcgate/dcgate.config.ts', DCGATE_DATA_DIR: '/var/lib/dcgate' })
    env.DCGATE_CONFIG = configFile
    env.DCGATE_DATA_DIR = join(scratch, 'service-data')
    const [command, ...args] = unit.ExecStart![0]!.split(' ')
    // The unit's /usr/bin/node is the box's Node 22 or 24; here that path holds the machine's Node 20, so the Node
    // running this test (24 in CI) stands in for it, as this checkout stands in for /opt/dcgate.
    expect(command).toBe('/usr/bin/node')
    const child = spawn(process.execPath, args, { cwd: unit.WorkingDirectory![0]!.replace('/opt/dcgate', REPO_ROOT), env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
    try {
      await expect.poll(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status, { timeout: 120_000, interval: 250 }).toBe(200)
      expect(unit.KillSignal).toEqual(['SIGTERM'])
      const started = Date.now()
      child.kill('SIGTERM')
      expect(await Promise.race([exited, sleep(30_000).then(() => 'still running')]), output).toBe(0)
      expect(Date.now() - started).toBeLessThan(Number.parseInt(unit.TimeoutStopSec![0]!, 10) * 1000)
    }
    finally {
      child.kill('SIGKILL')
    }
  }, 180_000)
})

/** The [Service] section of a unit file, each key with its values in order (Environment may repeat). */
function serviceSection(unit: string): Record<string, string[]> {
  const section = /^\[Service\]\n([\s\S]*?)(?=^\[)/m.exec(unit)![1]!
  const keys: Record<string, string[]> = {}
  for (const line of section.split('\n').filter((l) => l && !l.startsWith('#'))) {
    const at = line.indexOf('=')
    ;(keys[line.slice(0, at)] ??= []).push(line.slice(at + 1))
  }
  return keys
}

/** migrate, then dump, then restore; the rest in any order. */
function order(command: string): number {
  return ['npx dcgate migrate', 'pg_dump', 'psql --quiet', 'pg_restore'].findIndex((start) => command.startsWith(start)) + 1 || 9
}
