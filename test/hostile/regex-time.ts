import { Worker } from 'node:worker_threads'

/**
 * Finding every regular expression a request runs, and timing it on the inputs that make a backtracking engine
 * slow. Recording wraps RegExp.prototype.exec: once it is replaced, V8 calls it for test, match, matchAll, replace,
 * split and search too (their spec steps go through `exec`), so every pattern any code runs is seen, our own,
 * valibot's and h3's alike. Timing builds long inputs from the pattern's own characters: each literal (its
 * delimiters), one character each class or escape matches, and what a negated class leaves out.
 */

export interface SeenPattern {
  source: string
  flags: string
  /** What ran it: routes, or work after them. */
  where: Set<string>
  /** The longest input it was given. */
  longest: number
}

/** Records, until stopped, the patterns exec'd while `label()` names something. */
export function recordPatterns(label: () => string | undefined): { seen: Map<string, SeenPattern>, stop: () => void } {
  const seen = new Map<string, SeenPattern>()
  const original = RegExp.prototype.exec
  RegExp.prototype.exec = function exec(this: RegExp, input: string) {
    const where = label()
    if (where !== undefined) {
      // split runs a sticky copy of the pattern; the pattern is the same.
      const flags = this.flags.replace('y', '')
      const id = `/${this.source}/${flags}`
      const entry = seen.get(id) ?? { source: this.source, flags, where: new Set<string>(), longest: 0 }
      entry.where.add(where)
      entry.longest = Math.max(entry.longest, String(input).length)
      seen.set(id, entry)
    }
    return original.call(this, input)
  }
  return { seen, stop: () => void (RegExp.prototype.exec = original) }
}

/** Tried for classes and escapes; the first one a class matches (or a negated class refuses) stands for it. */
const CANDIDATES = ['a', 'Z', '0', ' ', '_', '-', '.', '@', ':', '/', '=', '&', '%', ',', ';', '"', '\\', 'é', '\u0001', '\n', '😀']
const MAX_CHARACTERS = 12

/** The characters a pattern's source is built of: literals, and one that each class or escape matches. */
export function charactersOf(source: string, flags = ''): string[] {
  const found: string[] = []
  const add = (character: string | undefined) => {
    if (character !== undefined && character !== '' && !found.includes(character)) found.push(character)
  }
  const matchingClass = (klass: string) => {
    let test: RegExp
    try {
      test = new RegExp(klass, flags.includes('u') || flags.includes('v') ? 'u' : '')
    }
    catch {
      return
    }
    add(CANDIDATES.find((candidate) => test.test(candidate)))
    add(CANDIDATES.find((candidate) => !test.test(candidate)))
  }
  for (let i = 0; i < source.length; i++) {
    const character = source[i]!
    if (character === '\\') {
      const escaped = source.slice(i, i + 2)
      if (/\\[dDwWsSbB]/.test(escaped)) matchingClass(escaped)
      else if (escaped === '\\u' || escaped === '\\x') {
        const hex = source.slice(i + 2).match(/^(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4})|([0-9a-fA-F]{2}))/)
        if (hex) {
          add(String.fromCodePoint(Number.parseInt(hex[1] ?? hex[2] ?? hex[3]!, 16)))
          i += hex[0].length
        }
      }
      else if (escaped === '\\p' || escaped === '\\P') matchingClass(source.slice(i, source.indexOf('}', i) + 1))
      else add(escaped[1])
      i++
    }
    else if (character === '[') {
      let end = i + 1
      if (source[end] === '^') end++
      if (source[end] === ']') end++
      while (end < source.length && source[end] !== ']') end += source[end] === '\\' ? 2 : 1
      const klass = source.slice(i, end + 1)
      matchingClass(klass)
      // A class's literal members are delimiters too ([^@]+@… is slow on a run of @).
      for (const member of klass.slice(1, -1).replace(/^\^/, '').replace(/\\./g, '').replace(/.-./g, '')) add(member)
      i = end
    }
    else if (character === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(i))) i = source.indexOf('}', i)
    else if (character === '.') add('a')
    else if (!'^$|?*+()'.includes(character)) add(character)
  }
  add('a')
  add('!')
  return found.slice(0, MAX_CHARACTERS)
}

export interface SlowRun { pattern: string, input: string, ms: number }

interface Job { source: string, flags: string, characters: string[], length: number, limitMs: number }
type Report = { run: string, end: string, shape: string } | { slowMs: number } | { done: true }

/**
 * Runs in a worker (from its source text, so it may use nothing outside it), so a pattern that never finishes can be
 * stopped. Inputs of `length` characters: a run of one character, alone, ended by another, framed by another, and
 * two characters alternating then ended by an outsider. Each is tried with exec once (as test and match run it) and
 * with a scan over the whole input (as replace, split and matchAll run it). A slow run is tried twice more and its
 * best time counts, so a busy machine does not fail a linear pattern.
 */
function timeInWorker(port: { postMessage: (report: Report) => void }, job: Job): void {
  const once = new RegExp(job.source, job.flags.replace(/[gy]/g, ''))
  const all = new RegExp(job.source, `${job.flags.replace(/[gy]/g, '')}g`)
  const outsider = job.characters.includes('!') ? '\u0001' : '!'
  for (const run of job.characters) {
    const body = run.repeat(job.length)
    for (const end of ['', ...job.characters.filter((other) => other !== run)]) {
      const shapes: [string, string][] = end === ''
        ? [['run', body]]
        : [['run + end', body + end], ['end + run + end', end + body + end], ['(run + end) × n + outsider', (run + end).repeat(job.length / 2) + outsider]]
      for (const [shape, input] of shapes) {
        for (const scan of [false, true]) {
          port.postMessage({ run, end, shape: scan ? `${shape}, scanned` : shape })
          let best = Infinity
          for (let attempt = 0; attempt < 3 && best > job.limitMs; attempt++) {
            const started = performance.now()
            if (scan) input.replace(all, '')
            else once.exec(input)
            best = Math.min(best, performance.now() - started)
          }
          if (best > job.limitMs) return port.postMessage({ slowMs: Math.round(best) })
        }
      }
    }
  }
  port.postMessage({ done: true })
}

/**
 * The first hostile input of 100 KB on which the pattern runs longer than `limitMs`, if any. A run that gives no
 * answer within `giveUpMs` (catastrophic backtracking can take years) is stopped and counted as slow.
 */
export function slowRuns(pattern: SeenPattern, limitMs: number, giveUpMs = 2_000): Promise<SlowRun[]> {
  const job: Job = { source: pattern.source, flags: pattern.flags, characters: charactersOf(pattern.source, pattern.flags), length: 100_000, limitMs }
  const worker = new Worker(`const { parentPort, workerData } = require('node:worker_threads'); (${timeInWorker.toString()})(parentPort, workerData)`, { eval: true, workerData: job })
  const name = `/${pattern.source}/${pattern.flags}`
  return new Promise((resolve, reject) => {
    let trying = ''
    let timer: NodeJS.Timeout | undefined
    const finish = (result: SlowRun[]) => {
      clearTimeout(timer)
      void worker.terminate()
      resolve(result)
    }
    const watch = () => {
      clearTimeout(timer)
      timer = setTimeout(() => finish([{ pattern: name, input: trying, ms: giveUpMs }]), giveUpMs)
    }
    worker.on('message', (report: Report) => {
      if ('done' in report) return finish([])
      if ('slowMs' in report) return finish([{ pattern: name, input: trying, ms: report.slowMs }])
      trying = `${report.shape}, run ${JSON.stringify(report.run)}${report.end ? `, end ${JSON.stringify(report.end)}` : ''}`
      watch()
    })
    worker.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    watch()
  })
}
