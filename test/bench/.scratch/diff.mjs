import { readFileSync } from 'node:fs'
const [fa, ra, fb, rb, mode = 'pkg', n = '40'] = process.argv.slice(2)
const cat = (url) => {
  if (!url) return '(native/vm)'
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0]
  const m = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)/)
  if (m) return mode === 'pkg' ? m[1] : m[1] + '/' + m[2].split('/').pop()
  if (url.includes('/work/main/')) return 'dcgate:' + url.split('/work/main/')[1]
  return url
}
function load(f, reqs) {
  const p = JSON.parse(readFileSync(f, 'utf8'))
  const dt = new Map()
  for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
  const m = new Map()
  for (const n of p.nodes) {
    const f = n.callFrame
    const k = mode === 'pkg'
      ? (['(idle)', '(program)', '(garbage collector)'].includes(f.functionName) ? f.functionName : cat(f.url))
      : `${f.functionName || '(anon)'} ${cat(f.url)}`
    m.set(k, (m.get(k) ?? 0) + (dt.get(n.id) ?? 0) / reqs)
  }
  return m
}
const a = load(fa, Number(ra)), b = load(fb, Number(rb))
const keys = new Set([...a.keys(), ...b.keys()])
const rows = [...keys].map((k) => [k, a.get(k) ?? 0, b.get(k) ?? 0]).sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]))
let ta = 0, tb = 0; for (const [, x, y] of rows) { ta += x; tb += y }
console.log(`${'dcgate'.padStart(8)} ${'bare'.padStart(8)} ${'diff'.padStart(8)}  us/req (profile wall incl. idle)`)
console.log(`${ta.toFixed(2).padStart(8)} ${tb.toFixed(2).padStart(8)} ${(ta - tb).toFixed(2).padStart(8)}  TOTAL`)
for (const [k, x, y] of rows.slice(0, Number(n))) console.log(`${x.toFixed(2).padStart(8)} ${y.toFixed(2).padStart(8)} ${(x - y).toFixed(2).padStart(8)}  ${k}`)
