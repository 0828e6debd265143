import { writeGeneration, type GenerationFormat, type QuarryIndex, type Steps } from '@quarry/core'
import type { Label } from '../../packages/core/src/ids.js'

/**
 * Writes an index as a version 4 snapshot, exactly as Quarry wrote them before version 5 (the
 * writer of packages/core/src/persist/snapshot.ts at that version): JSON lines for ids, metadata
 * (dates tagged), texts and the vocabulary, `forward.bin`, `vectors.f32`, `hnsw.bin`. For the
 * tests and the bench that check the version 4 reader kept beside version 5.
 */
const V4: GenerationFormat = { format: 'quarry-index', version: 4, kind: 'Quarry index', remedy: 'Restore it from a backup or save the index again with index.save(dir).' }

const NO_TEXT = 0xffff_ffff

export function saveV4(index: QuarryIndex, dir: string): void {
  const state = index.state
  writeGeneration(dir, V4, function* (out): Steps<Record<string, unknown>> {
    const extent = state.ids.extent
    function* jsonl(name: string, line: (label: number) => unknown): Steps {
      const w = out.create(name)
      for (let label = 0; label < extent; label++) w.text(`${JSON.stringify(line(label))}\n`)
      yield* w.finish()
    }
    yield* jsonl('ids.jsonl', (label) => state.ids.idOf(label as Label) ?? null)
    yield* jsonl('metadata.jsonl', (label) => {
      const m = state.metadata[label]
      return m ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v instanceof Date ? { $datetime: v.toISOString() } : v])) : null
    })
    yield* jsonl('texts.jsonl', (label) => state.texts.get(label) ?? null)
    const terms = out.create('terms.jsonl')
    for (const term of state.sparse.terms) terms.text(`${JSON.stringify(term)}\n`)
    yield* terms.finish()
    const forward = out.create('forward.bin')
    for (let label = 0; label < extent; label++) {
      const entry = state.sparse.forward(label as Label)
      if (!entry) {
        forward.bytes(new Uint8Array(new Uint32Array([NO_TEXT]).buffer))
        continue
      }
      forward.bytes(new Uint8Array(new Uint32Array([entry.ids.length]).buffer))
      forward.bytes(new Uint8Array(new Float64Array([state.sparse.lengthOf(label as Label)]).buffer))
      forward.bytes(new Uint8Array(entry.ids.buffer, entry.ids.byteOffset, entry.ids.byteLength))
      forward.bytes(new Uint8Array(entry.tfs.buffer, entry.tfs.byteOffset, entry.tfs.byteLength))
    }
    yield* forward.finish()
    if (state.store) {
      const v = out.create('vectors.f32')
      const rows = state.store.slice(extent)
      v.bytes(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength))
      yield* v.finish()
    }
    const graph = state.graph
    if (graph) graph.save(out.path('hnsw.bin'))
    return { options: state.options, extent, textTotalLength: state.sparse.totalLength }
  })
}
