import type { Bm25Params } from '../sparse/bm25.js'
import { PostingList } from '../sparse/postings.js'
import { NO_TEXT } from '../sparse/forward.js'
import { SparseIndex } from '../sparse/sparse-index.js'
import { ValueIndex, type FieldSnapshot, type LabelLists } from '../filter/value-index.js'
import type { SectionReader, SectionWriter } from './sections.js'
import type { Steps } from './steps.js'

/**
 * The derived structures of a version 5 snapshot, stored as they are in memory so that loading
 * rebuilds nothing (sections.ts):
 *
 *     postings.bin  strings terms[T], u32 lengths[T], f32 maxTf[T], f64 minLength[T],
 *                   u32 labels[Σ lengths], f32 tfs[Σ lengths] (each term's postings in memory order)
 *     forward.bin   u32 counts[extent] (NO_TEXT: not indexed), f64 lengths[extent],
 *                   u32 termIds[Σ counts], f32 tfs[Σ counts]
 *     values.bin    f64 [extent], u32 live[], strings fields[F], then per field: four label-list
 *                   groups (present by kind, exact, members, strings: strings keys[K],
 *                   u32 counts[K], u32 labels[Σ counts]) and two sorted runs (numbers, datetimes:
 *                   f64 values[], u32 labels[])
 */

export function* writePostings(sparse: SparseIndex, extent: number, out: SectionWriter): Steps {
  const data = sparse.snapshot(extent)
  const lists = data.postings
  yield* out.strings(data.terms.length, (i) => data.terms[i])
  const lengths = Uint32Array.from(lists, (p) => p.length)
  yield* out.u32(lengths)
  yield* out.f32(Float32Array.from(lists, (p) => p.maxTf))
  yield* out.f64(Float64Array.from(lists, (p) => p.minLength))
  const total = lengths.reduce((a, b) => a + b, 0)
  yield* out.concat('u32', total, lists.map((p) => p.labels.subarray(0, p.length)))
  yield* out.concat('f32', total, lists.map((p) => p.tfs.subarray(0, p.length)))
}

export function* writeForward(sparse: SparseIndex, extent: number, out: SectionWriter): Steps {
  const data = sparse.snapshot(extent)
  const { counts, ids, tfs } = data.forward
  yield* out.u32(counts)
  const lengths = new Float64Array(extent)
  lengths.set(data.lengths.subarray(0, extent))
  yield* out.f64(lengths)
  const total = ids.reduce((sum, part) => sum + part.length, 0)
  yield* out.concat('u32', total, ids)
  yield* out.concat('f32', total, tfs)
}

/**
 * The text index of `postings.bin` and `forward.bin`; throws `fail()` when their parts do not
 * fit together (counts against lengths, term ids and labels in range).
 */
export function readSparse(params: Bm25Params, postings: SectionReader, forward: SectionReader, extent: number, totalLength: number, fail: { readonly postings: () => Error; readonly forward: () => Error }): SparseIndex {
  const terms = postings.strings()
  const T = terms.length
  const lengths = postings.u32(T)
  const maxTf = postings.f32(T)
  const minLength = postings.f64(T)
  const total = lengths.reduce((a, b) => a + b, 0)
  const labels = postings.u32(total)
  const tfs = postings.f32(total)
  postings.end()
  if (terms.some((t) => t === undefined)) throw fail.postings()
  const lists = new Array<PostingList>(T)
  const columns = { labels, tfs }
  let at = 0
  for (let t = 0; t < T; t++) {
    const n = lengths[t] as number
    lists[t] = PostingList.restore(columns, at, n, maxTf[t] as number, minLength[t] as number)
    at += n
  }
  if (!allBelow(labels, extent)) throw fail.postings()

  const counts = forward.u32(extent)
  const docLengths = forward.f64(extent)
  let sum = 0
  for (let label = 0; label < extent; label++) if (counts[label] !== NO_TEXT) sum += counts[label] as number
  const ids = forward.u32(sum)
  const ftfs = forward.f32(sum)
  forward.end()
  for (let i = 0; i < ids.length; i++) if ((ids[i] as number) >= T) throw fail.forward()
  // The entries stay in these columns (views of the loaded file): no object per record.
  const index = SparseIndex.fromSnapshot(params, { terms: terms as string[], postings: lists, forward: { counts, ids, tfs: ftfs }, lengths: docLengths, totalLength })
  // Undefined for a term named twice (the forward counts were checked against its arrays above).
  if (!index) throw fail.postings()
  return index
}

function* writeLists(lists: LabelLists, out: SectionWriter): Steps {
  yield* out.strings(lists.length, (i) => lists[i]?.[0])
  const counts = Uint32Array.from(lists, ([, labels]) => labels.length)
  yield* out.u32(counts)
  yield* out.concat('u32', counts.reduce((a, b) => a + b, 0), lists.map(([, labels]) => labels))
}

/** A group of label lists; throws `fail()` on a label at or past `extent`. */
function readLists(input: SectionReader, extent: number, fail: () => Error): LabelLists {
  const keys = input.strings()
  const counts = input.u32(keys.length)
  const labels = input.u32(counts.reduce((a, b) => a + b, 0))
  if (!allBelow(labels, extent)) throw fail()
  const out: (readonly [string, Uint32Array])[] = []
  let at = 0
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    if (key === undefined) throw fail()
    const n = counts[i] as number
    out.push([key, labels.subarray(at, at + n)])
    at += n
  }
  return out
}

export function* writeValues(values: ValueIndex, out: SectionWriter): Steps {
  const data = values.snapshot()
  yield* out.f64(Float64Array.of(data.extent))
  yield* out.u32(data.live)
  yield* out.strings(data.fields.length, (i) => data.fields[i]?.field)
  for (const f of data.fields) {
    for (const lists of [f.present, f.exact, f.members, f.strings]) yield* writeLists(lists, out)
    for (const run of [f.numbers, f.datetimes]) {
      yield* out.f64(run.values)
      yield* out.u32(run.labels)
    }
  }
}

/**
 * The value indexes of `values.bin` for a snapshot of `extent` labels; throws `fail()` when they
 * are not a value index's. Every label is checked against `extent` before any bitset is sized by
 * one: a damaged label (a flipped high byte) would otherwise size bitsets of up to 512 MB each and
 * take minutes to refuse.
 */
export function readValues(input: SectionReader, extent: number, fail: () => Error): ValueIndex {
  const labels = () => {
    const read = input.u32()
    if (!allBelow(read, extent)) throw fail()
    return read
  }
  const saved = input.f64(1)[0] as number
  const live = labels()
  const names = input.strings()
  const fields: FieldSnapshot[] = []
  for (const field of names) {
    if (field === undefined) throw fail()
    const [present, exact, members, strings] = [readLists(input, extent, fail), readLists(input, extent, fail), readLists(input, extent, fail), readLists(input, extent, fail)] as const
    const numbers = { values: input.f64(), labels: labels() }
    const datetimes = { values: input.f64(), labels: labels() }
    fields.push({ field, present, exact, members, strings, numbers, datetimes })
  }
  input.end()
  if (!Number.isSafeInteger(saved) || saved < 0 || saved > extent) throw fail()
  const index = ValueIndex.fromSnapshot({ extent: saved, live, fields })
  if (!index) throw fail()
  return index
}

/** Whether every label is below `extent` (checked before anything is sized by a label). */
function allBelow(labels: Uint32Array, extent: number): boolean {
  for (let i = 0; i < labels.length; i++) if ((labels[i] as number) >= extent) return false
  return true
}
