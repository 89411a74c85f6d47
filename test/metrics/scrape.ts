import { expect } from 'vitest'
import type { TestApp } from '../helpers/app.ts'

/** GET /metrics from loopback (an in-process request): the Prometheus text, after checking it was served as such. */
export async function scrape(app: TestApp): Promise<string> {
  const response = await app.request('/metrics')
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return response.text()
}

/** The value of one sample (`name{labels}`, the labels given matched in any order), 0 when it is not there yet. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
    if (Object.entries(labels).every(([label, value]) => have[label] === value)) return Number(match[3])
  }
  return 0
}
