import { createHash } from 'node:crypto'
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Engines } from '../../packages/adapters/src/transport/bound-methods.js'
import { SectionReader } from '../../packages/core/src/persist/sections.js'

/**
 * A folder for scratch files that fsync makes no slower: `/dev/shm` (tmpfs) where there is one,
 * the system's temporary folder otherwise. For tests that check what is written, not that it
 * reaches a disk (the kill tests in test/faults do that).
 */
export function scratchDir(prefix: string): string {
  let root = tmpdir()
  try {
    if (statSync('/dev/shm').isDirectory()) {
      accessSync('/dev/shm', constants.W_OK)
      root = '/dev/shm'
    }
  } catch {
    // No tmpfs here: the temporary folder will do.
  }
  return mkdtempSync(join(root, prefix))
}

/**
 * Every engine's whole state, as each engine's `saveTo` writes it (a generation holding what a data
 * folder's generation holds: `state.json` with every resource, and each index's snapshot), read back into
 * one value for `toEqual`. JSON is compared parsed, so the order of an object's keys does not
 * count (the order of arrays, i.e. of resources, does); vectors (`vectors.f32`) and an HNSW graph
 * by size and sha256.
 *
 * An index's text index is compared as what it means, not as its bytes: per record, its length
 * and its terms with their frequencies (sparse-index.ts: term ids depend on insertion history, and
 * terms no record has any more may be kept; an empty posting list is never scored). For the same
 * reason a manifest is compared without its files' checksums and its seal.
 */
export function engineState(engines: Engines): Record<string, unknown> {
  const root = scratchDir('quarry-state-')
  try {
    const saves = { 'semantic-retriever': engines.semanticRetriever, 'vertex-rag': engines.vertexRag, 'memory-bank': engines.memoryBank }
    const out: Record<string, unknown> = {}
    for (const [api, engine] of Object.entries(saves)) {
      const dir = join(root, api)
      mkdirSync(dir)
      engine.saveTo(dir)
      out[api] = readTree(dir)
    }
    return out
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

function readTree(dir: string): Record<string, unknown> {
  const names = readdirSync(dir).sort()
  if (names.includes('postings.bin')) return readIndexSnapshotV5(dir, names)
  if (names.includes('forward.bin')) return readIndexSnapshot(dir, names)
  const out: Record<string, unknown> = {}
  for (const name of names) {
    const path = join(dir, name)
    out[name] = statSync(path).isDirectory() ? readTree(path) : readFile(name, readFileSync(path))
  }
  return out
}

function readFile(name: string, bytes: Buffer): unknown {
  // A generation's manifest: the files it lists, not their checksums (an index's text files differ after a reload, see above).
  if (name === 'manifest.json') {
    const sealed = JSON.parse(bytes.toString('utf8')) as { manifest: { files: Record<string, unknown> } }
    return { ...sealed.manifest, files: Object.keys(sealed.manifest.files).sort() }
  }
  if (name.endsWith('.json')) return JSON.parse(bytes.toString('utf8')) as unknown
  if (name.endsWith('.jsonl')) return bytes.toString('utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown)
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }
}

/** One core index snapshot (packages/core/src/persist/snapshot.ts): its files, the text index decoded. */
function readIndexSnapshot(dir: string, names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of names) {
    if (name === 'forward.bin' || name === 'terms.jsonl') continue
    out[name] = readFile(name, readFileSync(join(dir, name)))
  }
  const terms = readFile('terms.jsonl', readFileSync(join(dir, 'terms.jsonl'))) as string[]
  out.text = readForward(readFileSync(join(dir, 'forward.bin')), terms, (out['ids.jsonl'] as unknown[]).length)
  return out
}

/**
 * One version 5 core index snapshot: its files, the text index (`postings.bin`, `forward.bin`)
 * decoded into a per-record form (the other files by size and sha256).
 */
function readIndexSnapshotV5(dir: string, names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of names) {
    if (name === 'forward.bin' || name === 'postings.bin') continue
    out[name] = readFile(name, readFileSync(join(dir, name)))
  }
  const sections = (name: string): SectionReader => {
    const bytes = readFileSync(join(dir, name))
    const aligned = new Uint8Array(new ArrayBuffer(bytes.length))
    aligned.set(bytes)
    return new SectionReader(aligned, () => new Error(`${name} is not valid`))
  }
  const terms = sections('postings.bin').strings()
  const forward = sections('forward.bin')
  const counts = forward.u32()
  const lengths = forward.f64(counts.length)
  const ids = forward.u32()
  const tfs = forward.f32(ids.length)
  let at = 0
  out.text = Array.from(counts, (count, label) => {
    if (count === NO_TEXT) return null
    const entry: [string, number][] = []
    for (let i = 0; i < count; i++) entry.push([terms[ids[at + i] as number] as string, tfs[at + i] as number])
    at += count
    return { length: lengths[label] as number, terms: entry.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) }
  })
  return out
}

/** A record's count with no text (snapshot.ts NO_TEXT). */
const NO_TEXT = 0xffff_ffff

/**
 * `forward.bin`, per label: a u32 term count (NO_TEXT: no text), then the float64 length, the u32
 * term ids and the f32 term frequencies (little-endian): as `{ length, terms: [term, tf][] }` (by
 * term: a term may be `__proto__`) or null.
 */
function readForward(bytes: Buffer, terms: readonly string[], extent: number): ({ length: number; terms: [string, number][] } | null)[] {
  const records: ({ length: number; terms: [string, number][] } | null)[] = []
  let at = 0
  for (let label = 0; label < extent; label++) {
    const count = bytes.readUInt32LE(at)
    at += 4
    if (count === NO_TEXT) {
      records.push(null)
      continue
    }
    const length = bytes.readDoubleLE(at)
    at += 8
    const entry: [string, number][] = []
    for (let i = 0; i < count; i++) entry.push([terms[bytes.readUInt32LE(at + 4 * i)] as string, bytes.readFloatLE(at + 4 * count + 4 * i)])
    at += 8 * count
    records.push({ length, terms: entry.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) })
  }
  if (at !== bytes.length) throw new Error(`forward.bin has ${bytes.length - at} bytes after its ${extent} records`)
  return records
}
