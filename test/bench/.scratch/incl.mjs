import { readFileSync } from 'node:fs'
const [file, reqs, ...pats] = process.argv.slice(2)
const p = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const dt = new Map()
for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
const parent = new Map()
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const label = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*node_modules\//, '').replace('file:///work/main/', '')}:${n.callFrame.lineNumber + 1}`
const incl = new Map(pats.map((p) => [p, 0]))
for (const n of p.nodes) {
  const t = dt.get(n.id) ?? 0
  if (!t) continue
  const chain = []
  for (let id = n.id; id !== undefined; id = parent.get(id)) chain.push(label(byId.get(id)))
  for (const pat of pats) if (chain.some((l) => l.includes(pat))) incl.set(pat, incl.get(pat) + t)
}
for (const [k, v] of incl) console.log(`${(v / 1000).toFixed(0).padStart(6)} ms  ${(v / Number(reqs)).toFixed(2).padStart(6)} us/req  ${k}`)
