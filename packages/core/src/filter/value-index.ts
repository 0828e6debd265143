import type { Metadata } from '../engine/record.js'
import { Bitset } from '../util/bitset.js'
import type { Filter } from './ast.js'
import { filterTyped, ordered, storedTyped, type Typed, type ValueKind } from './values.js'

/**
 * (value, label) pairs of one numeric kind for range queries: a sorted run plus an unsorted run of
 * recent writes, merged before a query when it holds over 1,024 entries (and during writes when it
 * outgrows the sorted run). An entry counts only while its label still holds that value (a typed
 * array lookup), so removals and replacements cost O(1) and stale entries go at the next merge.
 */
class SortedValues {
  /** The current value by label (NaN when the label holds none): the truth entries are checked against. */
  #current = new Float64Array(1024).fill(Number.NaN)
  #values = new Float64Array(0)
  #labels = new Uint32Array(0)
  #pendingValues: number[] = []
  #pendingLabels: number[] = []

  set(label: number, value: number): void {
    if (label >= this.#current.length) {
      let size = this.#current.length
      while (size <= label) size *= 2
      const grown = new Float64Array(size).fill(Number.NaN)
      grown.set(this.#current)
      this.#current = grown
    }
    this.#current[label] = value
    this.#pendingValues.push(value)
    this.#pendingLabels.push(label)
    // Doubling keeps bulk loads at O(n log n) sorting in total.
    if (this.#pendingValues.length > Math.max(1024, this.#values.length)) this.#merge()
  }

  delete(label: number): void {
    if (label < this.#current.length) this.#current[label] = Number.NaN
  }

  /** Labels whose value lies in the range, into `out`. */
  range(lo: number, loInclusive: boolean, hi: number, hiInclusive: boolean, out: Bitset): void {
    // A query never scans more than 1,024 unsorted entries: merge first after a batch of writes.
    if (this.#pendingValues.length > 1024) this.#merge()
    const current = this.#current
    const values = this.#values
    const labels = this.#labels
    for (let i = lowerBound(values, lo, loInclusive); i < values.length; i++) {
      const v = values[i] as number
      if (v > hi || (v === hi && !hiInclusive)) break
      const label = labels[i] as number
      if (current[label] === v) out.add(label)
    }
    const pv = this.#pendingValues
    for (let i = 0; i < pv.length; i++) {
      const v = pv[i] as number
      if ((v > lo || (v === lo && loInclusive)) && (v < hi || (v === hi && hiInclusive))) {
        const label = this.#pendingLabels[i] as number
        if (current[label] === v) out.add(label)
      }
    }
  }

  #merge(): void {
    const labels: number[] = []
    const current = this.#current
    for (let label = 0; label < current.length; label++) if (!Number.isNaN(current[label] as number)) labels.push(label)
    labels.sort((x, y) => (current[x] as number) - (current[y] as number) || x - y)
    this.#labels = Uint32Array.from(labels)
    this.#values = Float64Array.from(labels, (l) => current[l] as number)
    this.#pendingValues = []
    this.#pendingLabels = []
  }
}

/** First index whose value is > lo (or ≥ lo when inclusive). */
function lowerBound(values: Float64Array, lo: number, inclusive: boolean): number {
  let a = 0
  let b = values.length
  while (a < b) {
    const mid = (a + b) >> 1
    const v = values[mid] as number
    if (v < lo || (v === lo && !inclusive)) a = mid + 1
    else b = mid
  }
  return a
}

/** The indexes of one metadata field. */
class FieldIndex {
  /** Labels holding a value of each kind. */
  readonly present = new Map<ValueKind, Bitset>()
  /** Exact-value postings for strings and booleans ("s:" / "b:" prefixed keys). */
  readonly exact = new Map<string, Bitset>()
  /** Members of string lists. */
  readonly members = new Map<string, Bitset>()
  readonly numbers = new SortedValues()
  readonly datetimes = new SortedValues()
  /** Distinct strings with their postings, for ordered string comparisons. */
  readonly strings = new Map<string, Bitset>()

  kind(kind: ValueKind): Bitset {
    let b = this.present.get(kind)
    if (!b) {
      b = new Bitset(64)
      this.present.set(kind, b)
    }
    return b
  }
}

function posting(map: Map<string, Bitset>, key: string): Bitset {
  let b = map.get(key)
  if (!b) {
    b = new Bitset(64)
    map.set(key, b)
  }
  return b
}

/**
 * Value indexes of every metadata field: string and boolean values → label bitsets, string-list
 * members → bitsets, numbers and datetimes → sorted arrays for ranges, and which labels hold a
 * value of each kind. `match` answers a declarative filter as a bitset without testing records;
 * `not` complements against the live labels.
 */
export class ValueIndex {
  readonly #fields = new Map<string, FieldIndex>()
  readonly #live = new Bitset(1024)
  #extent = 0

  add(label: number, metadata: Readonly<Metadata>): void {
    this.#live.add(label)
    if (label + 1 > this.#extent) this.#extent = label + 1
    for (const [field, value] of Object.entries(metadata)) {
      let index = this.#fields.get(field)
      if (!index) {
        index = new FieldIndex()
        this.#fields.set(field, index)
      }
      const typed = storedTyped(value) as Typed
      index.kind(typed.kind).add(label)
      switch (typed.kind) {
        case 'string':
          posting(index.strings, typed.value as string).add(label)
          break
        case 'boolean':
          posting(index.exact, `b:${String(typed.value)}`).add(label)
          break
        case 'number':
          index.numbers.set(label, typed.value as number)
          break
        case 'datetime':
          index.datetimes.set(label, typed.value as number)
          break
        case 'list':
          for (const member of value as readonly string[]) posting(index.members, member).add(label)
          break
      }
    }
  }

  remove(label: number, metadata: Readonly<Metadata>): void {
    this.#live.delete(label)
    for (const [field, value] of Object.entries(metadata)) {
      const index = this.#fields.get(field)
      if (!index) continue
      const typed = storedTyped(value) as Typed
      index.present.get(typed.kind)?.delete(label)
      switch (typed.kind) {
        case 'string':
          index.strings.get(typed.value as string)?.delete(label)
          break
        case 'boolean':
          index.exact.get(`b:${String(typed.value)}`)?.delete(label)
          break
        case 'number':
          index.numbers.delete(label)
          break
        case 'datetime':
          index.datetimes.delete(label)
          break
        case 'list':
          for (const member of value as readonly string[]) index.members.get(member)?.delete(label)
          break
      }
    }
  }

  /** The labels a filter matches (a fresh bitset the caller may modify). */
  match(filter: Filter): Bitset {
    const empty = (): Bitset => new Bitset(this.#extent)
    switch (filter.op) {
      case 'and': {
        if (filter.filters.length === 0) return this.#live.clone(this.#extent)
        const [first, ...rest] = filter.filters
        const out = this.match(first as Filter)
        for (const f of rest) out.and(this.match(f))
        return out
      }
      case 'or': {
        const out = empty()
        for (const f of filter.filters) out.or(this.match(f))
        return out
      }
      case 'not':
        return this.#live.clone(this.#extent).andNot(this.match(filter.filter))
      case 'exists': {
        const out = empty()
        const index = this.#fields.get(filter.field)
        if (index) for (const b of index.present.values()) out.or(b)
        return out
      }
      case 'includes':
      case 'excludes': {
        const index = this.#fields.get(filter.field)
        if (!index) return empty()
        const members = index.members.get(filter.value)
        if (filter.op === 'includes') return members ? members.clone(this.#extent) : empty()
        const lists = index.kind('list').clone(this.#extent)
        return members ? lists.andNot(members) : lists
      }
      case 'in':
      case 'nin': {
        const index = this.#fields.get(filter.field)
        if (!index) return empty()
        const wanted = filter.values.map(filterTyped)
        const found = empty()
        for (const w of wanted) found.or(this.#equal(index, w))
        if (filter.op === 'in') return found
        const kinds = new Set(wanted.map((w) => w.kind).filter((k) => k !== 'list'))
        const out = empty()
        for (const k of kinds) out.or(index.kind(k))
        return out.andNot(found)
      }
      default: {
        const index = this.#fields.get(filter.field)
        if (!index) return empty()
        const w = filterTyped(filter.value)
        if (filter.op === 'eq') return this.#equal(index, w)
        if (filter.op === 'ne') return index.kind(w.kind).clone(this.#extent).andNot(this.#equal(index, w))
        if (!ordered(w.kind)) return empty()
        const out = empty()
        const lo = filter.op === 'gt' || filter.op === 'gte'
        const inclusive = filter.op === 'lte' || filter.op === 'gte'
        if (w.kind === 'string') {
          const v = w.value as string
          for (const [s, b] of index.strings) {
            if (lo ? s > v || (inclusive && s === v) : s < v || (inclusive && s === v)) out.or(b)
          }
          return out
        }
        const sorted = w.kind === 'number' ? index.numbers : index.datetimes
        const v = w.value as number
        if (lo) sorted.range(v, inclusive, Infinity, true, out)
        else sorted.range(-Infinity, true, v, inclusive, out)
        return out
      }
    }
  }

  #equal(index: FieldIndex, w: Typed): Bitset {
    const out = new Bitset(this.#extent)
    switch (w.kind) {
      case 'string': {
        const b = index.strings.get(w.value as string)
        return b ? b.clone(this.#extent) : out
      }
      case 'boolean': {
        const b = index.exact.get(`b:${String(w.value)}`)
        return b ? b.clone(this.#extent) : out
      }
      case 'number':
        index.numbers.range(w.value as number, true, w.value as number, true, out)
        return out
      case 'datetime':
        index.datetimes.range(w.value as number, true, w.value as number, true, out)
        return out
      default:
        return out
    }
  }
}

