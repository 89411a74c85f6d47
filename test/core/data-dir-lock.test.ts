import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lockDataDir } from '../../core/db/data-dir-lock.ts'

describe('embedded data dir lock', () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'dcgate-lock-'))

  it('refuses a second owner while the first holds it, and frees it on release', () => {
    const file = join(dir(), 'db.lock')
    const release = lockDataDir(file)
    expect(() => lockDataDir(file)).toThrow(/in use by another dcgate process \(pid \d+\)/)
    release()
    expect(existsSync(file)).toBe(false)
    lockDataDir(file)()
  })

  it('refuses a lock held by another live process', () => {
    const file = join(dir(), 'db.lock')
    writeFileSync(file, `${process.ppid}\n`)
    expect(() => lockDataDir(file)).toThrow(`pid ${process.ppid}`)
  })

  it('takes over a lock left by a process that is gone', () => {
    const file = join(dir(), 'db.lock')
    writeFileSync(file, '2147483646\n')
    const release = lockDataDir(file)
    release()
  })
})
