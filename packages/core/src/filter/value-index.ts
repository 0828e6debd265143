import type { Metadata } from './values.js'
import { Bitset } from '../util/bitset.js'
import type { Filter, FilterScalar } from './ast.js'
import { filterTyped, ordered, storedTyped, type Typed, type ValueKind } from './values.js'

/** No entries: a field's run before its first value of the kind (and what a snapshot stores then). */
const NO_RUN = { values: new Float64Array(0), labels: new Uint32Array(0) } as const

/**
 * (value, label) pairs of one numeric kind for range queries: a sorted run plus an unsorted run of
 * recent writes, merged before a query when it holds over 1,024 entries (and during writes when it
 * outgrows the sorted run). An entry counts only while its label still holds that value (a lookup
 * of the label's current value), so removals and replacements cost O(1) and stale entries go at
 * the next merge.
 */
class SortedValues {
  /**
   * The current value by label, the truth entries are checked against: a Map while few labels hold
   * one (a field held by one record in a thousand), an array of 8 bytes a label (NaN: none) once
   * they are a quarter of the labels below the largest, where the Map's ~32 bytes an entry cost more.
   */
  #sparse: Map<number, number> | undefined = new Map()
  #dense: Float64Array | undefined
  /** While sparse: one past the largest label given a value (sizes the array a switch would make). */
  #top = 0
  /** Labels holding a value. */
  #count = 0
  // Replaced by each merge, never written in place: the empty ones are shared.
  #values: Float64Array<ArrayBuffer> = NO_RUN.values
  #labels: Uint32Array<ArrayBuffer> = NO_RUN.labels
  #pendingValues: number[] = []
  #pendingLabels: number[] = []
  /**
   * Writes that may have left an entry behind (a label given a value while it held one, or
   * removed) since the last merge: while none did, every entry holds, and a range query adds its
   * labels without looking each one up (a random read per entry).
   */
  #stale = 0

  /** Labels holding a value. */
  get size(): number {
    return this.#count
  }

  set(label: number, value: number): void {
    let held: boolean
    const dense = this.#dense
    if (dense === undefined) {
      const sparse = this.#sparse as Map<number, number>
      held = sparse.has(label)
      sparse.set(label, value)
      if (label >= this.#top) this.#top = label + 1
      if (sparse.size * 4 > this.#top) this.#toDense(sparse)
    } else {
      if (label >= dense.length) this.#grow(label)
      const current = this.#dense as Float64Array
      held = !Number.isNaN(current[label] as number)
      current[label] = value
    }
    if (held) this.#stale++
    else this.#count++
    this.#pendingValues.push(value)
    this.#pendingLabels.push(label)
    // Doubling keeps bulk loads at O(n log n) sorting in total.
    if (this.#pendingValues.length > Math.max(1024, this.#values.length)) this.#merge()
  }

  delete(label: number): void {
    const dense = this.#dense
    if (dense === undefined) {
      if (!(this.#sparse as Map<number, number>).delete(label)) return
    } else {
      if (label >= dense.length || Number.isNaN(dense[label] as number)) return
      dense[label] = Number.NaN
    }
    this.#count--
    this.#stale++
    // Back to a Map once few labels are left (a quarter of the switch's share: no flapping).
    if (dense !== undefined && dense.length > 1024 && this.#count * 16 < dense.length) this.#toSparse(dense)
    // Entries of removed labels would otherwise stay until the next write's merge.
    if (this.#stale > 1024 && this.#stale * 2 > this.#values.length) this.#merge()
  }

  /** The label's current value; NaN when it holds none. */
  #get(label: number): number {
    const dense = this.#dense
    if (dense !== undefined) return label < dense.length ? (dense[label] as number) : Number.NaN
    return (this.#sparse as Map<number, number>).get(label) ?? Number.NaN
  }

  #toDense(sparse: Map<number, number>): void {
    const dense = new Float64Array(Math.max(64, this.#top)).fill(Number.NaN)
    for (const [label, value] of sparse) dense[label] = value
    this.#dense = dense
    this.#sparse = undefined
  }

  #toSparse(dense: Float64Array): void {
    const sparse = new Map<number, number>()
    let top = 0
    for (let label = 0; label < dense.length; label++) {
      const v = dense[label] as number
      if (!Number.isNaN(v)) {
        sparse.set(label, v)
        top = label + 1
      }
    }
    this.#sparse = sparse
    this.#top = top
    this.#dense = undefined
  }

  #grow(label: number): void {
    const dense = this.#dense as Float64Array
    let size = dense.length
    while (size <= label) size *= 2
    const grown = new Float64Array(size).fill(Number.NaN)
    grown.set(dense)
    this.#dense = grown
  }

  /** Labels whose value lies in the range, into `out`. */
  range(lo: number, loInclusive: boolean, hi: number, hiInclusive: boolean, out: Bitset): void {
    // A query never scans more than 1,024 unsorted entries: merge first after a batch of writes.
    if (this.#pendingValues.length > 1024) this.#merge()
    this.#runInto(lo, loInclusive, hi, hiInclusive, out)
    const checked = this.#stale > 0
    const pv = this.#pendingValues
    for (let i = 0; i < pv.length; i++) {
      const v = pv[i] as number
      if ((v > lo || (v === lo && loInclusive)) && (v < hi || (v === hi && hiInclusive))) {
        const label = this.#pendingLabels[i] as number
        if (!checked || this.#get(label) === v) out.add(label)
      }
    }
  }

  /** Labels whose value is one of `wanted` (distinct values), into `out`: a binary search each, one pass over the unsorted run. */
  equalAny(wanted: readonly number[], out: Bitset): void {
    if (this.#pendingValues.length > 1024) this.#merge()
    for (const v of wanted) this.#runInto(v, true, v, true, out)
    const pv = this.#pendingValues
    if (pv.length === 0) return
    const checked = this.#stale > 0
    const set = new Set(wanted)
    for (let i = 0; i < pv.length; i++) {
      const v = pv[i] as number
      if (!set.has(v)) continue
      const label = this.#pendingLabels[i] as number
      if (!checked || this.#get(label) === v) out.add(label)
    }
  }

  /** The sorted run's labels whose value lies in the range and that still hold it, into `out`. */
  #runInto(lo: number, loInclusive: boolean, hi: number, hiInclusive: boolean, out: Bitset): void {
    const dense = this.#dense
    const values = this.#values
    const labels = this.#labels
    const checked = this.#stale > 0
    for (let i = lowerBound(values, lo, loInclusive); i < values.length; i++) {
      const v = values[i] as number
      if (v > hi || (v === hi && !hiInclusive)) break
      const label = labels[i] as number
      if (!checked || (dense !== undefined ? dense[label] === v : this.#get(label) === v)) out.add(label)
    }
  }

  /**
   * Exactly how many labels hold `v`, without a bitset of them. The sorted run has at most one
   * entry per label (a merge keeps one entry per label holding a value); a label written since
   * may also have entries among the writes, which count only for a label the run did not count.
   */
  countEqual(v: number): number {
    if (this.#pendingValues.length > 1024) this.#merge()
    const values = this.#values
    const labels = this.#labels
    const lo = lowerBound(values, v, true)
    const hi = lowerBound(values, v, false)
    const pv = this.#pendingValues
    if (this.#stale === 0) {
      // Every entry holds and no label has two: count the entries.
      let n = hi - lo
      for (let i = 0; i < pv.length; i++) if (pv[i] === v) n++
      return n
    }
    let n = 0
    for (let i = lo; i < hi; i++) if (this.#get(labels[i] as number) === v) n++
    // A label given v again since the merge may have an entry in both runs, or twice among the
    // writes: a holding run entry for it (labels ascend among equal values) was counted above.
    const counted = new Set<number>()
    for (let i = 0; i < pv.length; i++) {
      const label = this.#pendingLabels[i] as number
      if (pv[i] !== v || counted.has(label) || this.#get(label) !== v) continue
      counted.add(label)
      const at = lowerBoundOf(labels, label, lo, hi)
      if (at === hi || labels[at] !== label) n++
    }
    return n
  }

  /**
   * About how many labels hold a value in the range, without visiting them: the sorted run's
   * entries counted by binary search, plus the unsorted ones in the range (at most 1,024 to test).
   * Entries of the sorted run a later write made stale count too, until the next merge.
   */
  countRange(lo: number, loInclusive: boolean, hi: number, hiInclusive: boolean): number {
    if (this.#pendingValues.length > 1024) this.#merge()
    const values = this.#values
    let n = Math.max(0, lowerBound(values, hi, !hiInclusive) - lowerBound(values, lo, loInclusive))
    const pv = this.#pendingValues
    for (let i = 0; i < pv.length; i++) {
      const v = pv[i] as number
      if ((v > lo || (v === lo && loInclusive)) && (v < hi || (v === hi && hiInclusive)) && this.#get(this.#pendingLabels[i] as number) === v) n++
    }
    return n
  }

  /**
   * The entries in value order (ties by label), exactly one per label holding a value: merged
   * first when writes left unsorted or stale entries (a reorganization results cannot see).
   */
  sorted(): { readonly values: Float64Array<ArrayBuffer>; readonly labels: Uint32Array<ArrayBuffer> } {
    if (this.#pendingValues.length > 0 || !this.#exact()) this.#merge()
    return { values: this.#values, labels: this.#labels }
  }

  /** True when the sorted run holds one entry per label holding a value, and nothing else. */
  #exact(): boolean {
    // As many entries as holders, each holding: no label can have two.
    if (this.#count !== this.#values.length) return false
    for (let i = 0; i < this.#values.length; i++) if (this.#get(this.#labels[i] as number) !== this.#values[i]) return false
    return true
  }

  /**
   * Values from {@link sorted} (adopted); null when there are none (a field without this kind
   * needs no run), undefined unless they are sorted, finite and one per label.
   */
  static restore(values: Float64Array<ArrayBuffer>, labels: Uint32Array<ArrayBuffer>): SortedValues | null | undefined {
    if (values.length !== labels.length) return undefined
    if (values.length === 0) return null
    const out = new SortedValues()
    let top = 0
    for (let i = 0; i < labels.length; i++) if ((labels[i] as number) >= top) top = (labels[i] as number) + 1
    // Laid out as writes would have left it.
    out.#top = top
    if (values.length * 4 > top) out.#toDense(new Map())
    const dense = out.#dense
    const sparse = out.#sparse
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number
      const label = labels[i] as number
      if (!Number.isFinite(v) || !Number.isNaN(out.#get(label))) return undefined
      if (i > 0) {
        const before = values[i - 1] as number
        if (v < before || (v === before && label < (labels[i - 1] as number))) return undefined
      }
      if (dense !== undefined) dense[label] = v
      else sparse?.set(label, v)
    }
    out.#count = values.length
    out.#values = values
    out.#labels = labels
    return out
  }

  /**
   * The sorted run and the writes since, as one sorted run of the entries that hold: only the
   * writes are sorted, then the two runs are merged in one pass (a rebuild sorting every entry cost
   * a range query tens of milliseconds at 200,000 values). Equal entries meet in the merge, so a
   * label given a value twice keeps one.
   */
  #merge(): void {
    const pv = this.#pendingValues
    const pl = this.#pendingLabels
    const order = Array.from(pv, (_, i) => i)
    order.sort((x, y) => (pv[x] as number) - (pv[y] as number) || (pl[x] as number) - (pl[y] as number))
    const sv = this.#values
    const sl = this.#labels
    // While no write left an entry behind, every entry holds and none comes twice.
    const checked = this.#stale > 0
    const values = new Float64Array(this.#count)
    const labels = new Uint32Array(this.#count)
    let i = 0
    let j = 0
    let k = 0
    while (i < sv.length || j < order.length) {
      let v: number
      let label: number
      const o = order[j] as number
      if (j === order.length || (i < sv.length && ((sv[i] as number) < (pv[o] as number) || (sv[i] === pv[o] && (sl[i] as number) <= (pl[o] as number))))) {
        v = sv[i] as number
        label = sl[i++] as number
      } else {
        v = pv[o] as number
        label = pl[o] as number
        j++
      }
      if (checked && (this.#get(label) !== v || (k > 0 && labels[k - 1] === label && values[k - 1] === v))) continue
      values[k] = v
      labels[k++] = label
    }
    this.#values = values
    this.#labels = labels
    this.#pendingValues = []
    this.#pendingLabels = []
    this.#stale = 0
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

/** Below this many labels a posting stays a list whatever its labels. */
const LIST_MIN = 16

/**
 * The labels holding one value, ascending: a list while that is smaller than a bitset reaching
 * its largest label (4 bytes a label against 1 bit a label below it), a bitset from then on. A
 * value held by one record in a million (a URL, a document number) costs a few bytes instead of a
 * bitset as long as its label (quadratic in the records); a common value is a bitset as before.
 */
class Posting {
  #list: number[] | undefined = []
  #bits: Bitset | undefined
  /** Labels in the bitset (a list has its length). */
  #count = 0

  /** Labels held. */
  get size(): number {
    return this.#list === undefined ? this.#count : this.#list.length
  }

  add(label: number): void {
    const list = this.#list
    if (list === undefined) {
      const bits = this.#bits as Bitset
      if (!bits.has(label)) {
        bits.add(label)
        this.#count++
      }
      return
    }
    // A first label makes a list of one (a push onto [] would reserve room for 17).
    if (list.length === 0) {
      this.#list = [label]
      return
    }
    const at = lowerBoundOf(list, label)
    if (list[at] === label) return
    if (at === list.length) list.push(label)
    else list.splice(at, 0, label)
    if (list.length > LIST_MIN && list.length * 32 > (list[list.length - 1] as number) + 1) this.#toBits(list)
  }

  delete(label: number): void {
    const list = this.#list
    if (list === undefined) {
      const bits = this.#bits as Bitset
      if (!bits.has(label)) return
      bits.delete(label)
      // A list again once it is a quarter of the bitset (it became one at about equal size: a
      // label removed and added back does not switch it each time).
      if (--this.#count * 128 < bits.capacity) {
        this.#list = Array.from(bits.toArray(this.#count))
        this.#bits = undefined
      }
      return
    }
    const at = lowerBoundOf(list, label)
    if (list[at] === label) list.splice(at, 1)
  }

  /** out ∪= the labels. */
  orInto(out: Bitset): Bitset {
    const list = this.#list
    if (list === undefined) return out.or(this.#bits as Bitset)
    for (let i = 0; i < list.length; i++) out.add(list[i] as number)
    return out
  }

  /** The labels as a fresh bitset of at least `capacity` bits (the caller may modify it). */
  toBitset(capacity: number): Bitset {
    return this.#list === undefined ? (this.#bits as Bitset).clone(capacity) : this.orInto(new Bitset(capacity))
  }

  toArray(): Uint32Array {
    return this.#list === undefined ? (this.#bits as Bitset).toArray() : Uint32Array.from(this.#list)
  }

  /** A posting of ascending labels (from a snapshot); undefined when they are not ascending. */
  static of(labels: Uint32Array): Posting | undefined {
    const out = new Posting()
    for (let i = 0; i < labels.length; i++) {
      if (i > 0 && (labels[i] as number) <= (labels[i - 1] as number)) return undefined
      out.add(labels[i] as number)
    }
    return out
  }

  #toBits(list: readonly number[]): void {
    const bits = new Bitset((list[list.length - 1] as number) + 1)
    for (let i = 0; i < list.length; i++) bits.add(list[i] as number)
    this.#bits = bits
    this.#count = list.length
    this.#list = undefined
  }
}

/** First index of `list` (ascending from `from` to `to`) in that span whose value is ≥ `x`; `to` when none is. */
function lowerBoundOf(list: ArrayLike<number>, x: number, from = 0, to = list.length): number {
  let a = from
  let b = to
  // Labels mostly arrive in ascending order: check the end first.
  if (b === a || (list[b - 1] as number) < x) return b
  while (a < b) {
    const mid = (a + b) >> 1
    if ((list[mid] as number) < x) a = mid + 1
    else b = mid
  }
  return a
}

/**
 * The indexes of one metadata field. Everything in it is sized by the records holding the field,
 * not by the labels of the index: an index may hold a field per record (a key made of an id), and
 * a structure as long as the label range in each would cost the square of the records.
 */
class FieldIndex {
  /** Labels holding a value of each kind. */
  readonly present = new Map<ValueKind, Posting>()
  // The rest is made by the first value of its kind (an empty Map is some 200 bytes): a field
  // holds one or two kinds.
  /** Exact-value postings for booleans ("b:" prefixed keys). */
  exact: Map<string, Posting> | undefined
  /** Members of string lists. */
  members: Map<string, Posting> | undefined
  numbers: SortedValues | undefined
  datetimes: SortedValues | undefined
  /** Distinct strings with their postings, for ordered string comparisons. */
  strings: Map<string, Posting> | undefined

  /** The labels holding a value of `kind` as a fresh bitset of at least `capacity` bits. */
  holding(kind: ValueKind, capacity: number): Bitset {
    const p = this.present.get(kind)
    return p ? p.toBitset(capacity) : new Bitset(capacity)
  }
}

const NO_POSTINGS: ReadonlyMap<string, Posting> = new Map()


function posting<K extends string>(map: Map<K, Posting>, key: K): Posting {
  let p = map.get(key)
  if (!p) {
    p = new Posting()
    map.set(key, p)
  }
  return p
}

/**
 * Takes `label` from the posting of `key`, dropping the posting once empty (a value no record holds,
 * such as a removed record's URL, costs nothing); the map, or undefined once it is empty.
 */
function unpost<K>(map: Map<K, Posting> | undefined, key: K, label: number): Map<K, Posting> | undefined {
  const p = map?.get(key)
  if (!map || !p) return map
  p.delete(label)
  if (p.size === 0) map.delete(key)
  return map.size === 0 ? undefined : map
}

/** Postings by key (a kind, a value, a member): the labels holding it, ascending. */
export type LabelLists = readonly (readonly [string, Uint32Array])[]

/** One field's indexes as a snapshot stores them. */
export interface FieldSnapshot {
  readonly field: string
  /** Labels holding a value of each kind, by kind. */
  readonly present: LabelLists
  readonly exact: LabelLists
  readonly members: LabelLists
  readonly strings: LabelLists
  readonly numbers: { readonly values: Float64Array<ArrayBuffer>; readonly labels: Uint32Array<ArrayBuffer> }
  readonly datetimes: { readonly values: Float64Array<ArrayBuffer>; readonly labels: Uint32Array<ArrayBuffer> }
}

/** A value index as a snapshot stores it. */
interface ValueIndexSnapshot {
  readonly extent: number
  readonly live: Uint32Array
  readonly fields: readonly FieldSnapshot[]
}

const KINDS: readonly ValueKind[] = ['string', 'number', 'boolean', 'datetime', 'list']

function bitsetOf(labels: Uint32Array): Bitset | undefined {
  const b = new Bitset(labels.length === 0 ? 64 : (labels[labels.length - 1] as number) + 1)
  for (let i = 0; i < labels.length; i++) {
    if (i > 0 && (labels[i] as number) <= (labels[i - 1] as number)) return undefined
    b.add(labels[i] as number)
  }
  return b
}

function listsOf(map: ReadonlyMap<string, { toArray(): Uint32Array }>): LabelLists {
  return [...map].map(([key, b]) => [key, b.toArray()] as const)
}

/** Label lists as a map of bitsets or postings; undefined when a list is not ascending or a key comes twice. */
function mapOf<T>(lists: LabelLists, make: (labels: Uint32Array) => T | undefined): Map<string, T> | undefined {
  const map = new Map<string, T>()
  for (const [key, labels] of lists) {
    const b = make(labels)
    if (b === undefined || map.has(key)) return undefined
    map.set(key, b)
  }
  return map
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

  /** The indexes as label lists and sorted values, for a snapshot. */
  snapshot(): ValueIndexSnapshot {
    const fields = [...this.#fields].map(([field, index]): FieldSnapshot => ({
      field,
      present: listsOf(index.present),
      exact: listsOf(index.exact ?? NO_POSTINGS),
      members: listsOf(index.members ?? NO_POSTINGS),
      strings: listsOf(index.strings ?? NO_POSTINGS),
      numbers: index.numbers?.sorted() ?? NO_RUN,
      datetimes: index.datetimes?.sorted() ?? NO_RUN,
    }))
    return { extent: this.#extent, live: this.#live.toArray(), fields }
  }

  /** The index a {@link snapshot} describes; undefined when it is not one (unsorted labels, a key twice). */
  static fromSnapshot(data: ValueIndexSnapshot): ValueIndex | undefined {
    const out = new ValueIndex()
    const live = bitsetOf(data.live)
    if (!live) return undefined
    out.#live.or(live)
    out.#extent = data.extent
    for (const f of data.fields) {
      if (out.#fields.has(f.field)) return undefined
      const index = new FieldIndex()
      const present = mapOf(f.present, Posting.of)
      const exact = mapOf(f.exact, Posting.of)
      const members = mapOf(f.members, Posting.of)
      const strings = mapOf(f.strings, Posting.of)
      const numbers = SortedValues.restore(f.numbers.values, f.numbers.labels)
      const datetimes = SortedValues.restore(f.datetimes.values, f.datetimes.labels)
      if (!present || !exact || !members || !strings || numbers === undefined || datetimes === undefined) return undefined
      for (const [kind, b] of present) {
        if (!(KINDS as readonly string[]).includes(kind)) return undefined
        index.present.set(kind as ValueKind, b)
      }
      if (exact.size > 0) index.exact = exact
      if (members.size > 0) index.members = members
      if (strings.size > 0) index.strings = strings
      index.numbers = numbers ?? undefined
      index.datetimes = datetimes ?? undefined
      out.#fields.set(f.field, index)
    }
    return out
  }

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
      posting(index.present, typed.kind).add(label)
      switch (typed.kind) {
        case 'string':
          posting((index.strings ??= new Map()), typed.value as string).add(label)
          break
        case 'boolean':
          posting((index.exact ??= new Map()), `b:${String(typed.value)}`).add(label)
          break
        case 'number':
          ;(index.numbers ??= new SortedValues()).set(label, typed.value as number)
          break
        case 'datetime':
          ;(index.datetimes ??= new SortedValues()).set(label, typed.value as number)
          break
        case 'list':
          for (const member of value as readonly string[]) posting((index.members ??= new Map()), member).add(label)
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
      unpost(index.present, typed.kind, label)
      switch (typed.kind) {
        case 'string':
          index.strings = unpost(index.strings, typed.value as string, label)
          break
        case 'boolean':
          index.exact = unpost(index.exact, `b:${String(typed.value)}`, label)
          break
        case 'number':
          index.numbers?.delete(label)
          if (index.numbers?.size === 0) index.numbers = undefined
          break
        case 'datetime':
          index.datetimes?.delete(label)
          if (index.datetimes?.size === 0) index.datetimes = undefined
          break
        case 'list':
          for (const member of value as readonly string[]) index.members = unpost(index.members, member, label)
          break
      }
      // A key no record holds any more (an id in a key, its record removed) costs nothing.
      if (index.present.size === 0) this.#fields.delete(field)
    }
  }

  /**
   * About how many labels `filter` matches, for a planner, without the bitset of a range: a
   * numeric or datetime range counts its sorted values ({@link SortedValues.countRange}: over by
   * at most a merge's worth), `and` takes its smallest part, `or` the sum of its parts, `eq` and
   * `in` count their values' labels exactly; any other filter is matched and counted.
   */
  estimate(filter: Filter): number {
    switch (filter.op) {
      case 'and': {
        if (filter.filters.length === 0) return this.#live.count()
        // A loop, not Math.min(...parts): an argument list as long as the filter overflows the stack.
        let n = Infinity
        for (const f of filter.filters) n = Math.min(n, this.estimate(f))
        return n
      }
      case 'or': {
        let n = 0
        for (const f of filter.filters) n += this.estimate(f)
        return Math.min(this.#live.count(), n)
      }
      case 'eq':
      case 'in': {
        const index = this.#fields.get(filter.field)
        return index ? this.#countEqual(index, 'value' in filter ? [filter.value] : filter.values) : 0
      }
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte': {
        const index = this.#fields.get(filter.field)
        const w = filterTyped(filter.value)
        if (!index || (w.kind !== 'number' && w.kind !== 'datetime')) return this.match(filter).count()
        const sorted = w.kind === 'number' ? index.numbers : index.datetimes
        if (!sorted) return 0
        const v = w.value as number
        const inclusive = filter.op === 'lte' || filter.op === 'gte'
        return filter.op === 'gt' || filter.op === 'gte' ? sorted.countRange(v, inclusive, Infinity, true) : sorted.countRange(-Infinity, true, v, inclusive)
      }
      default:
        return this.match(filter).count()
    }
  }

  /** The labels a filter matches (a fresh bitset the caller may modify). */
  match(filter: Filter): Bitset {
    switch (filter.op) {
      case 'and': {
        const parts = filter.filters
        if (parts.length === 0) return this.#live.clone(this.#extent)
        const out = this.match(parts[0] as Filter)
        // Once nothing passes, the other parts cannot change that.
        for (let i = 1; i < parts.length && !out.isEmpty(); i++) out.and(this.match(parts[i] as Filter))
        return out
      }
      case 'not':
        return this.#live.clone(this.#extent).andNot(this.match(filter.filter))
      case 'includes':
      case 'excludes': {
        const index = this.#fields.get(filter.field)
        if (!index) return new Bitset(this.#extent)
        const members = index.members?.get(filter.value)
        if (filter.op === 'includes') return members ? members.toBitset(this.#extent) : new Bitset(this.#extent)
        const lists = index.holding('list', this.#extent)
        return members ? lists.andNot(members.toBitset(this.#extent)) : lists
      }
      case 'nin': {
        const index = this.#fields.get(filter.field)
        if (!index) return new Bitset(this.#extent)
        const found = new Bitset(this.#extent)
        this.#equalInto(index, filter.values, found)
        const out = new Bitset(this.#extent)
        for (const k of new Set(filter.values.map((v) => filterTyped(v).kind))) index.present.get(k)?.orInto(out)
        return out.andNot(found)
      }
      case 'ne': {
        const index = this.#fields.get(filter.field)
        if (!index) return new Bitset(this.#extent)
        const equal = new Bitset(this.#extent)
        this.#equalInto(index, [filter.value], equal)
        return index.holding(filterTyped(filter.value).kind, this.#extent).andNot(equal)
      }
      default: {
        const out = new Bitset(this.#extent)
        this.#orInto(filter, out)
        return out
      }
    }
  }

  /**
   * out ∪= the labels `filter` matches. Equalities, `in`, `or`, `exists`, `includes` and ranges add
   * their postings straight to `out`, so a wide `or` or `in` costs its values and their labels, not
   * a bitset of every record per value; the `eq` and `in` parts of an `or` are gathered by field
   * first (a numeric value's lookup then shares one pass over the unsorted run with the others).
   */
  #orInto(filter: Filter, out: Bitset): void {
    switch (filter.op) {
      case 'or': {
        const byField = new Map<string, FilterScalar[]>()
        for (const f of filter.filters) {
          if (f.op !== 'eq' && f.op !== 'in') {
            this.#orInto(f, out)
            continue
          }
          let values = byField.get(f.field)
          if (!values) {
            values = []
            byField.set(f.field, values)
          }
          if ('value' in f) values.push(f.value)
          else for (const v of f.values) values.push(v)
        }
        for (const [field, values] of byField) {
          const index = this.#fields.get(field)
          if (index) this.#equalInto(index, values, out)
        }
        return
      }
      case 'eq':
      case 'in': {
        const index = this.#fields.get(filter.field)
        if (index) this.#equalInto(index, 'value' in filter ? [filter.value] : filter.values, out)
        return
      }
      case 'exists': {
        const index = this.#fields.get(filter.field)
        if (index) for (const p of index.present.values()) p.orInto(out)
        return
      }
      case 'includes': {
        this.#fields.get(filter.field)?.members?.get(filter.value)?.orInto(out)
        return
      }
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte': {
        const index = this.#fields.get(filter.field)
        const w = filterTyped(filter.value)
        if (!index || !ordered(w.kind)) return
        const lo = filter.op === 'gt' || filter.op === 'gte'
        const inclusive = filter.op === 'lte' || filter.op === 'gte'
        if (w.kind === 'string') {
          const v = w.value as string
          for (const [s, b] of index.strings ?? NO_POSTINGS) {
            if (lo ? s > v || (inclusive && s === v) : s < v || (inclusive && s === v)) b.orInto(out)
          }
          return
        }
        const sorted = w.kind === 'number' ? index.numbers : index.datetimes
        if (!sorted) return
        const v = w.value as number
        if (lo) sorted.range(v, inclusive, Infinity, true, out)
        else sorted.range(-Infinity, true, v, inclusive, out)
        return
      }
      default:
        out.or(this.match(filter))
    }
  }

  /** out ∪= the labels holding one of `values` (a value of another kind than the stored one matches nothing). */
  #equalInto(index: FieldIndex, values: readonly FilterScalar[], out: Bitset): void {
    const { numbers, datetimes } = distinctNumbers(values)
    for (const v of values) {
      if (typeof v === 'string') index.strings?.get(v)?.orInto(out)
      else if (typeof v === 'boolean') index.exact?.get(`b:${String(v)}`)?.orInto(out)
    }
    if (numbers.length > 0) index.numbers?.equalAny(numbers, out)
    if (datetimes.length > 0) index.datetimes?.equalAny(datetimes, out)
  }

  /** Exactly how many labels hold one of `values`: a field holds one value, so the values' labels are disjoint. */
  #countEqual(index: FieldIndex, values: readonly FilterScalar[]): number {
    const { numbers, datetimes } = distinctNumbers(values)
    let n = 0
    for (const v of new Set(values.filter((x) => typeof x === 'string' || typeof x === 'boolean'))) {
      n += (typeof v === 'string' ? index.strings?.get(v) : index.exact?.get(`b:${String(v)}`))?.size ?? 0
    }
    for (const v of numbers) n += index.numbers?.countEqual(v) ?? 0
    for (const v of datetimes) n += index.datetimes?.countEqual(v) ?? 0
    return n
  }
}

/** The distinct numbers and datetimes (epoch milliseconds) among filter values. */
function distinctNumbers(values: readonly FilterScalar[]): { numbers: number[]; datetimes: number[] } {
  const numbers = new Set<number>()
  const datetimes = new Set<number>()
  for (const v of values) {
    if (typeof v === 'number') numbers.add(v)
    else if (typeof v === 'object') datetimes.add(filterTyped(v).value as number)
  }
  return { numbers: [...numbers], datetimes: [...datetimes] }
}
