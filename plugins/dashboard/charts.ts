/**
 * Server-side SVG charts: no script, no CDN, drawn the moment the page is. Each chart is an image with a <title> and
 * a <desc> for screen readers, and the same numbers follow it as a table (inside <details>), so nothing is shown only
 * as a picture. Colours are presentation attributes (the dashboard's CSP forbids inline style).
 */
import { html, type Html } from './html.ts'

export interface Series { key: string, label: string, colour: string }

export interface StackedBarInput {
  /** Unique on the page: ids for aria references. */
  id: string
  title: string
  /** The x axis, in order (e.g. UTC days as YYYY-MM-DD). */
  columns: readonly string[]
  /** Stacked bottom to top, in this order. */
  series: readonly Series[]
  value: (column: string, series: string) => number
  /** How a column is labelled under its bar (default: as it stands). */
  columnLabel?: (column: string) => string
}

const WIDTH = 640
const HEIGHT = 200
const PAD = { top: 12, right: 8, bottom: 28, left: 40 }

/** A stacked bar per column, one colour per series, with a legend and its data table. */
export function stackedBarChart(input: StackedBarInput): Html {
  const { id, columns, series, value } = input
  const label = input.columnLabel ?? ((c: string) => c)
  const totals = columns.map((c) => series.reduce((sum, s) => sum + value(c, s.key), 0))
  const max = niceMax(Math.max(0, ...totals))
  const plotW = WIDTH - PAD.left - PAD.right
  const plotH = HEIGHT - PAD.top - PAD.bottom
  const slot = plotW / Math.max(1, columns.length)
  const barW = Math.max(2, slot * 0.7)
  const y = (n: number) => PAD.top + plotH - (n / max) * plotH
  const bars = columns.map((column, i) => {
    let base = 0
    const x = PAD.left + i * slot + (slot - barW) / 2
    return series.map((s) => {
      const n = value(column, s.key)
      if (n <= 0) return ''
      const rect = html`<rect x="${x.toFixed(1)}" y="${y(base + n).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - y(base + n)).toFixed(1)}" fill="${s.colour}"><title>${label(column)}: ${n} ${s.label}</title></rect>`
      base += n
      return rect
    })
  })
  // Every label when they fit, otherwise about seven evenly spaced ones.
  const every = Math.max(1, Math.ceil(columns.length / 7))
  const xLabels = columns.map((column, i) => i % every === 0
    ? html`<text x="${(PAD.left + i * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="middle" font-size="11" fill="currentColor">${label(column)}</text>`
    : '')
  const ticks = [0, max / 2, max].map((n) => html`<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(n).toFixed(1)}" y2="${y(n).toFixed(1)}" stroke="currentColor" stroke-opacity="0.15"/><text x="${PAD.left - 6}" y="${(y(n) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="currentColor">${formatCount(n)}</text>`)
  const sum = totals.reduce((a, b) => a + b, 0)
  const description = `${sum} in all over ${columns.length} columns; ${series.map((s) => `${s.label} ${columns.reduce((a, c) => a + value(c, s.key), 0)}`).join(', ')}.`
  return html`<figure class="chart">
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc" preserveAspectRatio="xMidYMid meet">
<title id="${id}-title">${input.title}</title><desc id="${id}-desc">${description}</desc>${ticks}${bars}${xLabels}</svg>
<figcaption><span class="chart-title">${input.title}</span> <span class="legend">${series.map((s) => html`<span class="legend-item"><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${s.colour}"/></svg> ${s.label}</span>`)}</span></figcaption>
<details><summary>${input.title}: the numbers</summary><table><thead><tr><th scope="col">Day</th>${series.map((s) => html`<th scope="col">${s.label}</th>`)}</tr></thead>
<tbody>${columns.map((c) => html`<tr><th scope="row">${label(c)}</th>${series.map((s) => html`<td>${value(c, s.key)}</td>`)}</tr>`)}</tbody></table></details>
</figure>`
}

/** A share as a horizontal bar with its percentage: match quality. */
export function shareBar(label: string, part: number, whole: number): Html {
  const share = whole > 0 ? part / whole : 0
  const percent = `${Math.round(share * 100)}%`
  return html`<div class="share"><span class="share-label">${label}</span>
<svg viewBox="0 0 100 8" width="160" height="12" role="img" aria-label="${label}: ${percent} (${part} of ${whole})" preserveAspectRatio="none"><rect width="100" height="8" fill="currentColor" fill-opacity="0.12"/><rect width="${(share * 100).toFixed(1)}" height="8" fill="#2f6fdf"/></svg>
<span class="share-value">${percent} <span class="muted">(${part} of ${whole})</span></span></div>`
}

/** The axis top: 1, 2 or 5 times a power of ten, at least the largest total (and 1 for an empty chart). */
export function niceMax(n: number): number {
  if (n <= 1) return 1
  const power = 10 ** Math.floor(Math.log10(n))
  for (const step of [1, 2, 5, 10]) if (step * power >= n) return step * power
  return 10 * power
}

function formatCount(n: number): string {
  return n >= 10_000 ? `${Math.round(n / 1000)}k` : String(Math.round(n))
}
