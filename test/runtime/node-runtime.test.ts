import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { childEnv, REPO_ROOT, runCommand, runDcgate, tempDir, BIN } from '../helpers/server-process.ts'

// Issue 26: dcgate runs on Node.js 22 and 24 as Node runs TypeScript itself (type stripping), with no loader or
// transpiler at run time. These checks hold on whichever of the two runs the suite (.ci/run runs it on 24).
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string }
  scripts: Record<string, string>
  dependencies: Record<string, string>
}

describe('the Node.js runtime', () => {
  it('engines names Node 22 from 22.18 (types stripped without a flag) and Node 24', () => {
    expect(pkg.engines.node).toBe('^22.18.0 || ^24.3.0')
  })

  it('no npm script starts node with a loader, and no transpiler is a production dependency', () => {
    const nodeScripts = Object.entries(pkg.scripts).filter(([, command]) => /^node\s/.test(command))
    expect(nodeScripts.map(([name]) => name)).toEqual(expect.arrayContaining(['start', 'dcgate', 'bench']))
    for (const [name, command] of nodeScripts) expect(command, name).not.toMatch(/--import|--loader|--require|\btsx\b|ts-node/)
    for (const transpiler of ['tsx', 'ts-node', '@swc/register', '@babel/register']) expect(pkg.dependencies).not.toHaveProperty(transpiler)
  })

  it('the dcgate command runs TypeScript on this Node as it is', async () => {
    const run = await runDcgate(['--help'], childEnv({ DCGATE_DATA_DIR: tempDir(), NODE_OPTIONS: '' }))
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('dcgate')
  })

  it('a Node that cannot strip types gets one line saying which Node dcgate needs, not a stack trace', async () => {
    const run = await runCommand(process.execPath, ['--no-experimental-strip-types', BIN, '--help'], childEnv({ NODE_OPTIONS: '' }))
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toBe(`dcgate needs Node.js 22 (22.18 or later) or 24; this Node.js (${process.version}) does not run TypeScript files.`)
  })
})
