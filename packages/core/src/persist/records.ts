import { frozenDate, TextColumn, validateText, type Metadata, type MetadataValue, type TextInput } from '../engine/record.js'
import type { IndexState } from '../engine/state.js'
import { hashIdUnits, IdMap, type Label } from '../ids.js'
import type { SectionReader, SectionWriter } from './sections.js'
import type { Steps } from './steps.js'

/**
 * The per-record sections of a version 5 snapshot (sections.ts): ids, texts and metadata as
 * columns, so loading decodes ids a group at a time, leaves texts in the loaded buffer until they
 * are read (engine/record.ts TextColumn), and builds each metadata object from its shape without
 * parsing JSON.
 *
 *     ids.bin       strings ids[extent] (absent: a free label), u32 free[] (reuse order)
 *     texts.bin     u8 kinds[extent] (0 none, 1 a string, 2 fields as JSON), strings texts[extent]
 *     metadata.bin  strings keys, u32 shapeStarts[shapes + 1], u32 shapeKeys[], u8 shapeKinds[],
 *                   u32 shapeOf[extent] (NO_SHAPE: a free label), f64 numbers[] (numbers and
 *                   datetimes in ms), u8 booleans[], strings strings[] (values and list members),
 *                   u32 listLengths[]
 */

const NO_SHAPE = 0xffff_ffff

const TEXT_NONE = 0
const TEXT_STRING = 1
const TEXT_FIELDS = 2

const TEXT_KINDS = { none: TEXT_NONE, string: TEXT_STRING, fields: TEXT_FIELDS } as const

const KIND = { string: 0, number: 1, boolean: 2, datetime: 3, list: 4 } as const

export function* writeIds(state: IndexState, out: SectionWriter): Steps {
  yield* out.strings(state.ids.extent, (label) => state.ids.idOf(label as Label))
  yield* out.u32(Uint32Array.from(state.ids.free))
}

/** The id map, or undefined when the ids and free labels do not fit together. */
export function readIds(input: SectionReader, extent: number): IdMap | undefined {
  // Each id hashed from the bytes it is decoded from: the map is rebuilt without reading every id again.
  const hashes = new Uint32Array(extent)
  const ids = input.strings(extent, { hashes: { of: hashIdUnits, into: hashes } })
  const free = input.u32()
  input.end()
  return IdMap.restore(ids, free, hashes)
}

export function* writeTexts(state: IndexState, out: SectionWriter): Steps {
  const extent = state.ids.extent
  const kinds = new Uint8Array(extent)
  for (let label = 0; label < extent; label++) kinds[label] = TEXT_KINDS[state.texts.form(label)]
  yield* out.u8(kinds)
  yield* out.strings(extent, (label) => {
    const text = state.texts.get(label)
    return text === undefined || typeof text === 'string' ? text : JSON.stringify(text)
  })
}

/**
 * Texts by label, the strings left undecoded in the loaded file (fields are parsed and checked
 * now); throws `fail()` when a kind and its entry disagree.
 */
export function readTexts(input: SectionReader, extent: number, fail: () => Error): TextColumn {
  const kinds = input.u8(extent)
  const strings = input.stringRefs(extent)
  input.end()
  const texts: (TextInput | undefined)[] = []
  const live = new Uint8Array(extent)
  for (let label = 0; label < extent; label++) {
    const kind = kinds[label]
    const has = strings.has(label)
    // Pushed one by one: an array of a million holes made at once would be a dictionary.
    if (kind === TEXT_FIELDS && has) texts.push(fieldsOf(strings.at(label) as string, fail))
    else if ((kind === TEXT_NONE && !has) || (kind === TEXT_STRING && has)) texts.push(undefined)
    else throw fail()
    if (kind === TEXT_STRING) live[label] = 1
  }
  return new TextColumn({ texts, strings, live })
}

function fieldsOf(json: string, fail: () => Error): TextInput {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    throw fail()
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail()
  try {
    return validateText(value) as TextInput
  } catch {
    throw fail()
  }
}

/** A metadata object's keys and value kinds, in order: records with the same shape share its entry. */
interface Shape {
  readonly id: number
  readonly keys: readonly number[]
  readonly kinds: readonly number[]
}

function kindOf(value: MetadataValue): number {
  if (typeof value === 'string') return KIND.string
  if (typeof value === 'number') return KIND.number
  if (typeof value === 'boolean') return KIND.boolean
  if (value instanceof Date) return KIND.datetime
  return KIND.list
}

export function* writeMetadata(state: IndexState, out: SectionWriter): Steps {
  const extent = state.ids.extent
  const keys = new Map<string, number>()
  const shapes = new Map<string, Shape>()
  const shapeOf = new Uint32Array(extent).fill(NO_SHAPE)
  const numbers: number[] = []
  const booleans: number[] = []
  const strings: string[] = []
  const listLengths: number[] = []
  for (let label = 0; label < extent; label++) {
    const m = state.metadata[label]
    if (m === undefined) continue
    const shapeKeys: number[] = []
    const shapeKinds: number[] = []
    for (const [key, value] of Object.entries(m)) {
      let k = keys.get(key)
      if (k === undefined) {
        k = keys.size
        keys.set(key, k)
      }
      const kind = kindOf(value)
      shapeKeys.push(k)
      shapeKinds.push(kind)
      switch (kind) {
        case KIND.string:
          strings.push(value as string)
          break
        case KIND.number:
          numbers.push(value as number)
          break
        case KIND.boolean:
          booleans.push(value === true ? 1 : 0)
          break
        case KIND.datetime:
          numbers.push((value as Date).getTime())
          break
        default:
          listLengths.push((value as readonly string[]).length)
          for (const member of value as readonly string[]) strings.push(member)
      }
    }
    const name = `${shapeKeys.join(',')}/${shapeKinds.join(',')}`
    let shape = shapes.get(name)
    if (!shape) {
      shape = { id: shapes.size, keys: shapeKeys, kinds: shapeKinds }
      shapes.set(name, shape)
    }
    shapeOf[label] = shape.id
    if (label % 4096 === 0) yield
  }
  const keyList = [...keys.keys()]
  yield* out.strings(keyList.length, (i) => keyList[i])
  const all = [...shapes.values()]
  const starts = new Uint32Array(all.length + 1)
  all.forEach((s, i) => (starts[i + 1] = (starts[i] as number) + s.keys.length))
  yield* out.u32(starts)
  yield* out.u32(Uint32Array.from(all.flatMap((s) => s.keys)))
  yield* out.u8(Uint8Array.from(all.flatMap((s) => s.kinds)))
  yield* out.u32(shapeOf)
  yield* out.f64(Float64Array.from(numbers))
  yield* out.u8(Uint8Array.from(booleans))
  yield* out.strings(strings.length, (i) => strings[i])
  yield* out.u32(Uint32Array.from(listLengths))
}

/** Sets a property, even one named "__proto__" (plain assignment would change the prototype). */
function put(target: Record<string, MetadataValue>, key: string, value: MetadataValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

const EMPTY: Readonly<Metadata> = Object.freeze({})

/** Whether the first `count` values are the same (Object.is: 0 and -0 differ). */
function sameValues(a: readonly MetadataValue[], b: readonly MetadataValue[], count: number): boolean {
  for (let i = 0; i < count; i++) if (!Object.is(a[i], b[i])) return false
  return true
}

/**
 * Metadata by label (undefined for free labels), each a frozen object with stored Dates and
 * frozen lists, as validateMetadata makes them; throws `fail()` when the columns do not fit.
 * Consecutive records with the same plain metadata (no Dates or lists) share one frozen object.
 */
export function readMetadata(input: SectionReader, extent: number, fail: () => Error): (Readonly<Metadata> | undefined)[] {
  const keys = input.strings()
  const starts = input.u32()
  const shapeKeys = input.u32()
  const shapeKinds = input.u8(shapeKeys.length)
  const shapeOf = input.u32(extent)
  const numbers = input.f64()
  const booleans = input.u8()
  // The records of one source share their values (a RAG file's chunks name their file): a value
  // equal to one just read is that same string, not a copy of it.
  const strings = input.strings(undefined, { repeats: true })
  const listLengths = input.u32()
  input.end()
  const shapes = starts.length - 1
  if (shapes < 0 || starts[0] !== 0 || starts[shapes] !== shapeKeys.length) throw fail()
  for (let s = 0; s < shapes; s++) if ((starts[s + 1] as number) < (starts[s] as number)) throw fail()
  for (let i = 0; i < shapeKeys.length; i++) if ((shapeKeys[i] as number) >= keys.length || (shapeKinds[i] as number) > KIND.list) throw fail()
  const names = keys as string[]
  if (names.some((k) => k === undefined) || new Set(names).size !== names.length || strings.some((x) => x === undefined)) throw fail()
  // A shape names each key once.
  for (let s = 0; s < shapes; s++) {
    const inShape = shapeKeys.subarray(starts[s] as number, starts[s + 1] as number)
    if (new Set(inShape).size !== inShape.length) throw fail()
  }
  let n = 0
  let b = 0
  let s = 0
  let l = 0
  const out = new Array<Readonly<Metadata> | undefined>(extent)
  // A record whose shape and values (strings, numbers, booleans) are the previous record's gets
  // its frozen object too: a file's chunks share one, as they share `EMPTY`.
  let previous: Readonly<Metadata> | undefined
  let previousShape = NO_SHAPE
  let previousValues: MetadataValue[] = []
  let values: MetadataValue[] = []
  for (let label = 0; label < extent; label++) {
    const shape = shapeOf[label] as number
    if (shape === NO_SHAPE) {
      out[label] = undefined
      continue
    }
    if (shape >= shapes) throw fail()
    const from = starts[shape] as number
    const to = starts[shape + 1] as number
    if (from === to) {
      out[label] = EMPTY
      continue
    }
    let plain = true
    for (let i = from; i < to; i++) {
      let value: MetadataValue
      switch (shapeKinds[i]) {
        case KIND.string:
          if (s >= strings.length) throw fail()
          value = strings[s++] as string
          break
        case KIND.number:
          if (n >= numbers.length) throw fail()
          value = numbers[n++] as number
          if (!Number.isFinite(value)) throw fail()
          break
        case KIND.boolean:
          if (b >= booleans.length) throw fail()
          value = booleans[b++] === 1
          break
        case KIND.datetime:
          if (n >= numbers.length) throw fail()
          value = frozenDate(numbers[n++] as number)
          if (Number.isNaN(value.getTime())) throw fail()
          plain = false
          break
        default: {
          if (l >= listLengths.length) throw fail()
          const length = listLengths[l++] as number
          if (length > strings.length - s) throw fail()
          value = Object.freeze(strings.slice(s, s + length) as string[])
          s += length
          plain = false
        }
      }
      values[i - from] = value
    }
    if (plain && shape === previousShape && sameValues(values, previousValues, to - from)) {
      out[label] = previous
      continue
    }
    const m: Record<string, MetadataValue> = {}
    for (let i = from; i < to; i++) {
      const key = names[shapeKeys[i] as number] as string
      const value = values[i - from] as MetadataValue
      if (key === '__proto__') put(m, key, value)
      else m[key] = value
    }
    out[label] = Object.freeze(m)
    if (plain) {
      previous = out[label]
      previousShape = shape
      const spare = previousValues
      previousValues = values
      values = spare
    } else previousShape = NO_SHAPE
  }
  if (n !== numbers.length || b !== booleans.length || s !== strings.length || l !== listLengths.length) throw fail()
  return out
}
