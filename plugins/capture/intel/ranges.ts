/**
 * Sorted, non-overlapping IP ranges in typed arrays, each carrying a number (an ASN, or an index into a list of
 * labels). A lookup is a binary search: about 20 steps for the 400k IPv4 ranges of the ASN dataset.
 */
import { cidrBounds, type IpKey } from './ip.ts'

export interface RangeTable {
  /** The value of the range holding this address, or undefined. */
  lookup(key: IpKey): number | undefined
  /** Ranges after merging, IPv4 + IPv6. */
  readonly size: number
  /** The merged ranges themselves, so a table can be saved and read back without building it again (asn-cache.ts). */
  readonly columns: { four: Columns, six: Columns }
}

/** Compare two 64-bit keys given as (high, low) unsigned halves. */
function cmp64(ah: number, al: number, bh: number, bl: number): number {
  return ah !== bh ? ah - bh : al - bl
}

/**
 * Ranges are kept in parallel arrays of plain numbers (not one object per range): the ASN dataset has 500k of
 * them, and objects would triple the memory needed at boot.
 */
export class RangeBuilder {
  private s4: number[] = []
  private e4: number[] = []
  private v4: number[] = []
  private sh6: number[] = []
  private sl6: number[] = []
  private eh6: number[] = []
  private el6: number[] = []
  private v6: number[] = []
  /** Entries that were not an address or CIDR block. */
  rejected = 0

  add(start: IpKey, end: IpKey, value: number): void {
    if (start.v === 4 && end.v === 4) this.add4(start.n, end.n, value)
    else if (start.v === 6 && end.v === 6) this.add6(start.hi, start.lo, end.hi, end.lo, value)
  }

  add4(start: number, end: number, value: number): void {
    this.s4.push(start)
    this.e4.push(end)
    this.v4.push(value)
  }

  add6(startHi: number, startLo: number, endHi: number, endLo: number, value: number): void {
    this.sh6.push(startHi)
    this.sl6.push(startLo)
    this.eh6.push(endHi)
    this.el6.push(endLo)
    this.v6.push(value)
  }

  /** Add "1.2.3.0/24", "2a01::/32" or a single address; counts it in `rejected` when it is neither. */
  addCidr(cidr: string, value: number): boolean {
    const bounds = cidrBounds(cidr)
    if (!bounds) {
      this.rejected++
      return false
    }
    this.add(bounds.start, bounds.end, value)
    return true
  }

  /** The table; the builder is emptied, so a closure holding it does not keep the build arrays alive. */
  build(): RangeTable {
    const { s4, e4, v4, sh6, sl6, eh6, el6, v6 } = this
    const four = merge(s4.length, (a, b) => s4[a]! - s4[b]! || e4[b]! - e4[a]! || a - b, (i) => [0, s4[i]!, 0, e4[i]!, v4[i]!])
    const six = merge(sh6.length, (a, b) => cmp64(sh6[a]!, sl6[a]!, sh6[b]!, sl6[b]!) || cmp64(eh6[b]!, el6[b]!, eh6[a]!, el6[a]!) || a - b,
      (i) => [sh6[i]!, sl6[i]!, eh6[i]!, el6[i]!, v6[i]!])
    this.s4 = this.e4 = this.v4 = this.sh6 = this.sl6 = this.eh6 = this.el6 = this.v6 = []
    return createTable(four, six)
  }
}

/** Merged ranges as typed arrays: start (hi, lo), end (hi, lo), value. IPv4 uses lo only. */
export interface Columns { sh: Uint32Array, sl: Uint32Array, eh: Uint32Array, el: Uint32Array, value: Uint32Array, length: number }

/**
 * Sort by start (widest first) and remove overlaps. Adjacent or overlapping ranges with the same value become one;
 * a range nested in another keeps the outer range's value (the first list wins, which the caller orders).
 * Equal ranges keep their input order. Already-sorted input (the ASN CSVs) skips the sort.
 */
function merge(count: number, compare: (a: number, b: number) => number, row: (i: number) => number[]): Columns {
  let order: Uint32Array | undefined
  for (let i = 1; i < count; i++) {
    if (compare(i - 1, i) > 0) {
      order = Uint32Array.from({ length: count }, (_, k) => k).sort(compare)
      break
    }
  }
  const out: Columns = { sh: new Uint32Array(count), sl: new Uint32Array(count), eh: new Uint32Array(count), el: new Uint32Array(count), value: new Uint32Array(count), length: 0 }
  for (let k = 0; k < count; k++) {
    let [sh, sl, eh, el, value] = row(order ? order[k]! : k) as [number, number, number, number, number]
    const last = out.length - 1
    if (last >= 0) {
      const lastEh = out.eh[last]!
      const lastEl = out.el[last]!
      // the key right after the last range's end
      const [nh, nl] = lastEl === 0xffffffff ? [lastEh + 1, 0] : [lastEh, lastEl + 1]
      if (cmp64(sh, sl, nh, nl) <= 0) {
        if (cmp64(eh, el, lastEh, lastEl) <= 0) continue
        if (value === out.value[last]) {
          out.eh[last] = eh
          out.el[last] = el
          continue
        }
        if (cmp64(sh, sl, lastEh, lastEl) <= 0) [sh, sl] = [nh, nl]
      }
    }
    const at = out.length++
    out.sh[at] = sh
    out.sl[at] = sl
    out.eh[at] = eh
    out.el[at] = el
    out.value[at] = value
  }
  return out
}

export function createTable(four: Columns, six: Columns): RangeTable {
  const s4 = four.sl.subarray(0, four.length)
  const e4 = four.el.subarray(0, four.length)
  const val4 = four.value.subarray(0, four.length)
  const { sh: sh6, sl: sl6, eh: eh6, el: el6, value: val6, length: n6 } = six

  function lookup4(n: number): number | undefined {
    let lo = 0
    let hi = s4.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      if (s4[mid]! <= n) lo = mid + 1
      else hi = mid - 1
    }
    // hi is now the last range starting at or before n
    return hi >= 0 && n <= e4[hi]! ? val4[hi] : undefined
  }

  function lookup6(h: number, l: number): number | undefined {
    let lo = 0
    let hi = n6 - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      if (cmp64(sh6[mid]!, sl6[mid]!, h, l) <= 0) lo = mid + 1
      else hi = mid - 1
    }
    return hi >= 0 && cmp64(h, l, eh6[hi]!, el6[hi]!) <= 0 ? val6[hi] : undefined
  }

  return {
    size: four.length + n6,
    columns: { four, six },
    lookup: (key) => key.v === 4 ? lookup4(key.n) : lookup6(key.hi, key.lo),
  }
}
