import { createHash } from 'node:crypto'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { createIndex, loadIndex, QuarryError, type QuarryIndex } from '@quarry/core'
import { encodeManifest, type Manifest } from '../../packages/core/src/persist/manifest.js'
import { runs } from './runs.js'

// Every section of a core index snapshot as untrusted bytes: one file mutated (bit flips, overwritten
// bytes, 32-bit words set to edge values where lengths and counts sit, truncated, extended) and the
// manifest re-sealed over it, as someone who can write the folder would. Loading then either
// refuses with INVALID_SNAPSHOT naming that file, or gives an index that works: every kind of
// search, every record, a change, and a save that loads back the same. Never another error, and no
// allocation beyond a small multiple of the snapshot's size. (A changed byte inside a text or a
// vector can load: no reader can tell it from the saved one once the sum is re-sealed.)

function built(): QuarryIndex {
  const index = createIndex({ dimensions: 8, metric: 'cosine', planner: { exactBelow: 0 } })
  let seed = 11
  const next = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1
  const words = ['desert', 'ocean', 'storm', 'garden', 'rose', 'spice', 'tide']
  for (let i = 0; i < 90; i++) {
    index.add({
      id: `r${i}`,
      vector: Array.from({ length: 8 }, next),
      ...(i % 5 === 4 ? {} : { text: i % 2 === 0 ? `${words[i % 7]} ${words[(i * 3) % 7]}` : { title: words[(i * 5) % 7] as string, body: `${words[i % 7]} ${words[(i * 2) % 7]}` } }),
      metadata: { n: i, tag: `t${i % 3}`, when: new Date(86_400_000 * i), tags: [words[i % 7] as string] },
    })
  }
  for (let i = 0; i < 90; i += 8) index.remove(`r${i}`)
  return index
}

type Edit =
  | { readonly kind: 'flip'; readonly at: number; readonly bit: number }
  | { readonly kind: 'bytes'; readonly at: number; readonly bytes: readonly number[] }
  | { readonly kind: 'word'; readonly at: number; readonly value: number }

/** One section's changes: edits at fractions of its length, then a cut and appended bytes. */
interface Case {
  readonly section: string
  readonly edits: readonly Edit[]
  readonly keep: number
  readonly appended: readonly number[]
}

const fraction = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })

function caseArb(sections: readonly string[]): fc.Arbitrary<Case> {
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fraction, bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ kind: fc.constant('bytes' as const), at: fraction, bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 }) }),
    // Lengths, counts and labels are 32-bit words on 4-byte boundaries in most sections.
    fc.record({ kind: fc.constant('word' as const), at: fraction, value: fc.oneof(fc.constantFrom(0, 1, 2, 0x7f, 0xff, 0xffff, 0x7fff_ffff, 0xffff_ffff), fc.nat(300)) }),
  )
  return fc.record({
    section: fc.constantFrom(...sections),
    edits: fc.array(edit, { maxLength: 3 }),
    keep: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fraction }),
    appended: fc.oneof({ weight: 4, arbitrary: fc.constant([] as number[]) }, { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 8 }) }),
  })
}

function mutated(bytes: Buffer, c: Case): Buffer {
  const out = Buffer.from(bytes)
  for (const edit of c.edits) {
    if (out.length === 0) break
    const at = Math.floor(edit.at * out.length)
    if (edit.kind === 'flip') out[at] = (out[at] as number) ^ (1 << edit.bit)
    else if (edit.kind === 'bytes') Buffer.from(edit.bytes).copy(out, at)
    else if (out.length >= 4) out.writeUInt32LE(edit.value >>> 0, Math.min(at & ~3, out.length - 4))
  }
  return Buffer.concat([out.subarray(0, Math.floor(c.keep * out.length)), Buffer.from(c.appended)])
}

/** What a working index shows: its records, each kind of search, its text statistics. */
function observed(index: QuarryIndex): unknown {
  const ids = [...index.ids()].sort()
  const vector = [0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.0, 0.6]
  return {
    ids,
    records: ids.map((id) => index.get(id)),
    textStats: index.textStats,
    dense: index.search({ vector, topK: 10 }),
    text: index.search({ text: 'storm rose', topK: 10 }),
    hybrid: index.search({ text: 'ocean', vector, topK: 10, explain: true }),
    filtered: index.search({ vector, topK: 10, filter: { op: 'and', filters: [{ op: 'eq', field: 'tag', value: 't1' }, { op: 'gte', field: 'n', value: 20 }] } }),
    tags: index.search({ text: 'garden', topK: 10, filter: { op: 'includes', field: 'tags', value: 'tide' } }),
  }
}

/** The index in `work`, used: observed, changed, saved to `again` and loaded back; or what it threw. */
function used(work: string, again: string): { loaded: unknown; reloaded: unknown } | Error {
  try {
    const index = loadIndex(work)
    observed(index)
    index.upsert({ id: 'new', vector: [1, 0, 0, 0, 0, 0, 0, 1], text: 'storm tide', metadata: { n: 1000, tag: 't1' } })
    index.remove('r1')
    const loaded = observed(index)
    index.save(again)
    return { loaded, reloaded: observed(loadIndex(again)) }
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

/** Resident bytes the call added: its new peak if it made one, else what it holds after. */
function residentGrowth<T>(call: () => T): { result: T; grew: number } {
  const peakBefore = process.resourceUsage().maxRSS * 1024
  const before = process.memoryUsage.rss()
  const result = call()
  const peak = process.resourceUsage().maxRSS * 1024
  return { result, grew: Math.max(0, (peak > peakBefore ? peak : process.memoryUsage.rss()) - before) }
}

/**
 * Defines the property in the calling test file, on the graph build @quarry/hnsw loads in its
 * process (a file sets QUARRY_HNSW before calling this to choose one).
 */
export function describeSnapshotFuzz(build: string): void {
  const root = mkdtempSync(join(tmpdir(), 'quarry-snapshot-fuzz-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  const good = join(root, 'good')
  built().save(good)
  const generation = readFileSync(join(good, 'CURRENT'), 'latin1').trim()
  const manifestBytes = readFileSync(join(good, generation, 'manifest.json'))
  const sealed = JSON.parse(manifestBytes.toString('utf8')) as { manifest: Manifest }
  const sections = Object.keys(sealed.manifest.files).sort()
  const snapshotBytes = sections.reduce((n, name) => n + readFileSync(join(good, generation, name)).length, 0)

  describe(`a core snapshot with one section crafted behind a re-sealed manifest (${build} graph)`, () => {
    it('is refused with INVALID_SNAPSHOT naming the section, or loads into an index that searches, changes and saves; never another error or a large allocation', () => {
      const work = join(root, 'work')
      const again = join(root, 'again')
      cpSync(good, work, { recursive: true })
      const counts = { loaded: 0, refused: 0 }
      fc.assert(
        fc.property(caseArb(sections), (c) => {
          const path = join(work, generation, c.section)
          const original = readFileSync(path)
          const bytes = mutated(original, c)
          writeFileSync(path, bytes)
          const files = { ...sealed.manifest.files, [c.section]: { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } }
          writeFileSync(join(work, generation, 'manifest.json'), encodeManifest({ ...sealed.manifest, files }))
          try {
            const { result, grew } = residentGrowth(() => used(work, again))
            // 128 MB: the JavaScript heap's own growth, which a process cannot tell from the case's.
            expect(grew, `resident memory grew ${grew} bytes`).toBeLessThanOrEqual(16 * snapshotBytes + (128 << 20))
            if (result instanceof Error) {
              expect(result, result.stack).toBeInstanceOf(QuarryError)
              expect((result as QuarryError).code, result.message).toBe('INVALID_SNAPSHOT')
              expect(result.message).toContain(c.section)
              expect(result.message).not.toContain('\n')
              counts.refused++
            } else {
              expect(result.reloaded).toEqual(result.loaded)
              counts.loaded++
            }
          } finally {
            writeFileSync(path, original)
            writeFileSync(join(work, generation, 'manifest.json'), manifestBytes)
            rmSync(again, { recursive: true, force: true })
          }
        }),
        { numRuns: runs(80) },
      )
      console.log(`core snapshot (${build} graph), one section crafted and re-sealed: ${JSON.stringify(counts)}`)
      expect(counts.refused).toBeGreaterThan(0)
      expect(counts.loaded).toBeGreaterThan(0)
    })
  })
}
