import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { BootError } from '../errors.ts'

const heldHere = new Set<string>()

/**
 * PGlite has no lock of its own: two processes on one data dir would both write its files and corrupt
 * them. `<dataDir>/db.lock` holds the owner's pid; a lock whose process is gone is taken over.
 * Returns the release function.
 */
export function lockDataDir(file: string): () => void {
  try {
    writeFileSync(file, `${process.pid}\n`, { flag: 'wx' })
  }
  catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const owner = Number.parseInt(readFileSync(file, 'utf8'), 10)
    const ownerAlive = Number.isInteger(owner) && (owner === process.pid ? heldHere.has(file) : isAlive(owner))
    if (ownerAlive) {
      throw new BootError(`The embedded database next to ${file} is in use by another dcgate process (pid ${owner})`, [
        'stop that process first, or give this one another dataDir (DCGATE_DATA_DIR)',
        'to run several instances on one database, use PostgreSQL (DATABASE_URL)',
      ])
    }
    writeFileSync(file, `${process.pid}\n`)
  }
  heldHere.add(file)
  return () => {
    heldHere.delete(file)
    rmSync(file, { force: true })
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  }
  catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
