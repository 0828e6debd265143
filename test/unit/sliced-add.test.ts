import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { QuarryError, createHashingEmbedder, type PreparedText } from '@quarry/core'
import { VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { filesGoingIn } from '../../packages/adapters/src/vertex-rag/pending-files.js'
import type { RagCorpusState } from '../../packages/adapters/src/vertex-rag/state.js'

/**
 * A big file's records go into its corpus index in slices, with turns of the event loop between
 * them (pending-files.ts). Between slices the file is in part of the index and in no file list:
 * retrieval leaves it out (the answers of a corpus without it), a save is refused with BUSY, and a
 * file whose records fail in a later slice leaves the index whole.
 */
const L = 'projects/p/locations/l'
const CHUNKING = { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 16, chunkOverlap: 2 } } }
const WORDS = 'river stone harbor spice desert planet ocean storm garden tulip rose engine vector index search query token chunk batch file corpus memory answer score'.split(' ')
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`${outcome.status.code}: ${outcome.status.message}`)
  return outcome.response
}

/** `n` words cycling through WORDS from `offset`, a sentence every nine. */
function words(n: number, offset = 0): string {
  return Array.from({ length: n }, (_, k) => `${WORDS[(k * 7 + offset) % WORDS.length]}${k % 9 === 8 ? '.' : ''}`).join(' ')
}

async function engine(): Promise<{ engine: VertexRagEngine; corpus: RagCorpusState }> {
  const e = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(21) })
  const op = ok(await e.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'sliced' } }))
  const name = (op.response as unknown as { name: string }).name
  return { engine: e, corpus: e.corpora().get(name) as RagCorpusState }
}

const upload = (e: VertexRagEngine, corpus: RagCorpusState, displayName: string, text: string): Promise<Outcome<unknown>> =>
  e.v1beta1.uploadRagFile({ parent: corpus.name, ragFile: { displayName }, uploadRagFileConfig: CHUNKING }, text)

async function answers(e: VertexRagEngine, corpus: RagCorpusState, alphas: readonly number[] = [1, 0, 0.5]): Promise<unknown[]> {
  const out: unknown[] = []
  for (const text of ['river stone', 'garden rose tulip', 'vector index search']) {
    for (const alpha of alphas) out.push(ok(await e.v1beta1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus.name }] }, query: { text, ragRetrievalConfig: { topK: 10, hybridSearch: { alpha } } } })))
  }
  return out
}

/** Every record of the index belongs to a listed file, and every listed file's chunks are records. */
function consistent(corpus: RagCorpusState): void {
  const listed = [...corpus.files.values()].flatMap((f) => f.chunks.map((c) => c.id)).sort()
  expect([...corpus.index.ids()].sort()).toEqual(listed)
}

describe('a big file going into the index in slices', () => {
  it('is left out of retrieval and refuses a save until it is in whole, then is found', async () => {
    const small = [words(300, 1), words(300, 5), words(300, 11)]
    const big = words(120_000, 3)
    const sliced = await engine()
    const oracle = await engine()
    for (const [i, text] of small.entries()) {
      ok(await upload(sliced.engine, sliced.corpus, `s${i}.txt`, text))
      ok(await upload(oracle.engine, oracle.corpus, `s${i}.txt`, text))
    }
    const before = sliced.corpus.index.size
    const going = upload(sliced.engine, sliced.corpus, 'big.txt', big)
    // Turns of the event loop until the big file is partly in.
    while (!(filesGoingIn(sliced.corpus).size > 0 && sliced.corpus.index.size > before)) await new Promise((r) => setImmediate(r))
    const during = await answers(sliced.engine, sliced.corpus, [1])
    const duringText = (await answers(sliced.engine, sliced.corpus, [0, 0.5])) as { contexts: { contexts: { sourceDisplayName: string }[] } }[]
    // The answers were given while the file was still going in: part of it in the index, none listed.
    expect(filesGoingIn(sliced.corpus).size).toBe(1)
    expect(sliced.corpus.index.size).toBeGreaterThan(before)
    expect([...sliced.corpus.files.values()].map((f) => f.displayName)).toEqual(['s0.txt', 's1.txt', 's2.txt'])
    // Dense answers are those of the corpus without it; BM25's statistics already count the part
    // that is in (as they count deleted records until a merge in Lucene), so text answers are
    // only checked to leave the file out.
    expect(during).toEqual(await answers(oracle.engine, oracle.corpus, [1]))
    expect(new Set(duringText.flatMap((a) => a.contexts.contexts.map((c) => c.sourceDisplayName)))).toEqual(new Set(['s0.txt', 's1.txt', 's2.txt']))
    const dir = mkdtempSync(join(tmpdir(), 'quarry-sliced-'))
    dirs.push(dir)
    expect(() => sliced.engine.saveTo(dir)).toThrow(expect.objectContaining({ code: 'BUSY', message: expect.stringContaining('await it before saving') }))

    ok(await going)
    ok(await upload(oracle.engine, oracle.corpus, 'big.txt', big))
    expect(filesGoingIn(sliced.corpus).size).toBe(0)
    consistent(sliced.corpus)
    expect(await answers(sliced.engine, sliced.corpus)).toEqual(await answers(oracle.engine, oracle.corpus))
    sliced.engine.saveTo(dir)
  }, 60_000)

  it('takes a file whose records fail in a later slice out whole; the file beside it goes in', async () => {
    const big = `${words(60_000, 3)} poison`
    const small = words(400, 7)
    const sliced = await engine()
    const oracle = await engine()
    // Core refuses any add that holds the big file's last chunk (a fault no valid input makes: the
    // records were validated as they were made), so it fails in the add's last slice.
    for (const { corpus } of [sliced, oracle]) {
      const addMany = corpus.index.addMany.bind(corpus.index)
      corpus.index.addMany = (records) => {
        if (records.some((r) => ((r.text as PreparedText).text as string).includes('poison'))) throw new QuarryError('INVALID_RECORD', 'refused by the test')
        addMany(records)
      }
    }
    // Uploaded together: one batch, the small file after the big one.
    const [failed, fine] = await Promise.all([upload(sliced.engine, sliced.corpus, 'big.txt', big), upload(sliced.engine, sliced.corpus, 'small.txt', small)])
    expect(failed.ok).toBe(false)
    expect(fine.ok).toBe(true)
    // The oracle: one at a time (the big file draws its id, then fails alone).
    const oracleFailed = await upload(oracle.engine, oracle.corpus, 'big.txt', big)
    expect(oracleFailed).toEqual(failed)
    expect(await upload(oracle.engine, oracle.corpus, 'small.txt', small)).toEqual(fine)
    expect(filesGoingIn(sliced.corpus).size).toBe(0)
    consistent(sliced.corpus)
    expect([...sliced.corpus.files.values()].map((f) => f.displayName)).toEqual(['small.txt'])
    expect([...sliced.corpus.index.ids()].sort()).toEqual([...oracle.corpus.index.ids()].sort())
    expect(await answers(sliced.engine, sliced.corpus)).toEqual(await answers(oracle.engine, oracle.corpus))
  }, 60_000)
})
