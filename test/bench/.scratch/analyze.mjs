import { readFileSync } from 'node:fs'
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const dt = new Map()
for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
const self = new Map(), pkg = new Map()
let total = 0
const cat = (url) => {
  if (!url) return '(native/vm)'
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0]
  const m = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  if (m) return m[1]
  if (url.includes('/work/main/')) return 'dcgate:' + url.split('/work/main/')[1]
  return url
}
for (const n of p.nodes) {
  const t = dt.get(n.id) ?? 0
  total += t
  const f = n.callFrame
  const k = `${f.functionName || '(anon)'} ${cat(f.url)}:${f.lineNumber + 1}`
  self.set(k, (self.get(k) ?? 0) + t)
  const c = ['(idle)', '(program)', '(garbage collector)'].includes(f.functionName) ? f.functionName : cat(f.url)
  pkg.set(c, (pkg.get(c) ?? 0) + t)
}
const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${(v / 1000).toFixed(0).padStart(7)} ms ${(100 * v / total).toFixed(1).padStart(5)}%  ${k}`).join('\n')
console.log('total', (total / 1000).toFixed(0), 'ms\n--- by package\n' + top(pkg, 25) + '\n--- top self\n' + top(self, Number(process.argv[3] ?? 40)))
