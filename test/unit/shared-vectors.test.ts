import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { HelpedTexts, SHAREABLE_TEXTS, SharedVectors } from '../../packages/adapters/src/vertex-rag/shared-vectors.js'
import { importWorker, IMPORT_WORKER_MIN_FILES } from '../../packages/adapters/src/vertex-rag/import-worker.js'
import { EmbedQueue } from '../../packages/adapters/src/vertex-rag/embed-queue.js'
import { longestHold } from '../support/event-loop.js'
import { runs } from '../support/runs.js'

// An upload's texts embedded by the import worker and the calling thread at once, through shared
// memory: the worker takes texts from the front, the calling thread (help) from the back. The
// oracle is the embedder run on every text here: each text gets exactly its vector, each text is
// embedded once (bar the one the worker is on when the calling thread runs out), and nothing is
// lost however the two threads' steps interleave.

const DIMS = 3

/** The oracle's vector of a text: its index and length, so a vector in the wrong place shows. */
function vectorOf(text: string): Float32Array {
  return Float32Array.from([Number(text.slice(1)), text.length, 1])
}

/** The import worker running and ready: uploads start it at their IMPORT_WORKER_MIN_FILES-th ask; then it loads. */
async function workerReady(embedder: Embedder): Promise<void> {
  for (let i = 0; i <= IMPORT_WORKER_MIN_FILES && !importWorker.running; i++) importWorker.embed(['warm'], embedder)
  await expect.poll(() => importWorker.ready, { timeout: 20_000 }).toBe(true)
}

describe('texts shared with the import worker (shared-vectors.ts)', () => {
  it('front and back claims split the texts once each, whatever the interleaving; help gathers every vector, embedding only what the worker did not write', async () => {
    // The worker's steps (take a text, write its vector) before help, and during each text help
    // embeds; or the worker pauses on a text it took (in flight: help must not wait for it).
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.nat({ max: 45 }), fc.array(fc.nat({ max: 3 }), { maxLength: 45 }), fc.boolean(), async (count, first, during, pauses) => {
        const texts = Array.from({ length: count }, (_, i) => `t${i}`)
        const shared = SharedVectors.create(count, DIMS)
        // The worker's side, on the same buffer as its thread would see it.
        const worker = new SharedVectors(shared.buffer, count, DIMS)
        const written: number[] = []
        let paused = -1
        const workerSteps = (n: number): void => {
          for (let k = 0; k < n && paused < 0; k++) {
            const i = worker.claimFront()
            if (i < 0) return
            if (pauses && written.length === Math.floor(count / 2)) paused = i
            else {
              worker.write(i, vectorOf(texts[i] as string))
              written.push(i)
            }
          }
        }
        workerSteps(first)
        const embeddedHere: number[] = []
        let call = 0
        const all = await new HelpedTexts(texts, shared).help(async (text) => {
          embeddedHere.push(Number(text.slice(1)))
          workerSteps(during[call++] ?? 0)
          return vectorOf(text)
        })
        expect(all?.map((v) => [...v])).toEqual(texts.map((t) => [...vectorOf(t)]))
        // The worker wrote the first texts, in order; help embedded each of the others once (the
        // paused one included), the last first, and none the worker wrote.
        expect(written).toEqual(written.map((_, k) => k))
        expect([...embeddedHere].sort((a, b) => a - b)).toEqual(texts.map((_, i) => i).filter((i) => !written.includes(i)))
        const fromBack = embeddedHere.filter((i) => i !== paused)
        expect(fromBack).toEqual(fromBack.map((_, k) => count - 1 - k))
        if (paused >= 0) expect(embeddedHere).toContain(paused)
        expect(shared.claimBack()).toBe(-1)
        expect(worker.claimFront()).toBe(-1)
      }),
      { numRuns: runs(200) },
    )
  })

  it('a vector is written in order and read once written; a buffer of another size, or too many texts, is refused', () => {
    const shared = SharedVectors.create(3, DIMS)
    expect(shared.claimFront()).toBe(0)
    expect(shared.claimFront()).toBe(1)
    expect(() => shared.write(1, vectorOf('t1'))).toThrow(/not the next/)
    expect(() => shared.write(0, Float32Array.from([1, 2]))).toThrow(/3 long/)
    expect(() => shared.read(0)).toThrow(/not written/)
    shared.write(0, vectorOf('t0'))
    expect([...shared.read(0)]).toEqual([...vectorOf('t0')])
    expect(shared.done).toBe(1)
    expect(shared.front).toBe(2)
    expect(() => new SharedVectors(shared.buffer, 4, DIMS)).toThrow(/does not fit/)
    expect(() => SharedVectors.create(SHAREABLE_TEXTS + 1, 1)).toThrow(/does not fit/)
    // A help whose embedder fails gives no vectors: the caller embeds them all again, where the error surfaces.
    return expect(new HelpedTexts(['t0', 't1', 't2'], shared).help(async () => Promise.reject(new Error('down')))).resolves.toBeUndefined()
  })

  it('the import worker and this thread embed one upload\'s texts at once: each text its own vector, bit for bit, this thread\'s part in slices', async () => {
    const embedder = createHashingEmbedder({ dimensions: 256 })
    await workerReady(embedder)
    // Enough texts that both threads take some: this thread starts at once from the back, the worker
    // from the front once the message is there, a fraction of a second before this thread could finish.
    const words = Array.from({ length: 40 }, (_, k) => `word${k}`).join(' ')
    const texts = Array.from({ length: 60_000 }, (_, i) => `text ${i} of the upload, ${words} w${i % 97} w${i % 13}`)
    const oracle = await embedder.embed(texts)
    const bytes = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength)
    // This thread's part goes in slices: the event loop turns every few ms (issue 41's 50 ms bound,
    // in this thread's CPU time; a collection or a busy machine can stretch one run: the best of three).
    let best = Infinity
    for (let attempt = 0; attempt < 3 && best > 50; attempt++) {
      const before = importWorker.textsHelped
      const job = importWorker.embedHelped(texts, embedder)
      if (!job) throw new Error('the worker did not take the texts')
      let vectors: Float32Array[] = []
      const holds = await longestHold(async () => {
        await job.help()
        vectors = await job.vectors
      })
      best = Math.min(best, holds.hold - holds.idle)
      const helped = importWorker.textsHelped - before
      expect(helped).toBeGreaterThan(0)
      expect(helped).toBeLessThan(texts.length)
      expect(vectors.length).toBe(texts.length)
      vectors.forEach((v, i) => expect(bytes(v).equals(bytes(oracle[i] as Float32Array))).toBe(true))
    }
    expect(best).toBeLessThanOrEqual(50)
  }, 60_000)

  it('an upload\'s early texts over one message\'s 65,535 go in several, and keep their order', async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    await workerReady(embedder)
    const texts = Array.from({ length: SHAREABLE_TEXTS + 5_000 }, (_, i) => `t${i} w${i % 101}`)
    const sent = importWorker.helpedSent
    const upload = new EmbedQueue(embedder, true).beginEarly()
    upload.early(texts.slice(0, SHAREABLE_TEXTS + 10))
    const vectors = upload.embed(texts)
    await upload.help()
    const oracle = await embedder.embed(texts)
    expect((await vectors).map((v) => [...v])).toEqual(oracle.map((v) => [...v]))
    // Early: one full message and one of 10 texts; then the rest in one.
    expect(importWorker.helpedSent - sent).toBe(3)
  }, 60_000)

  it('an upload of one text, none sent early, is embedded here: no message to the worker; two texts go to it', async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    await workerReady(embedder)
    const queue = new EmbedQueue(embedder, true)
    const [one, two] = [['a single chunk of words'], ['the first chunk', 'the second chunk']]
    const sent = importWorker.helpedSent
    const single = queue.beginEarly()
    const alone = single.embed(one)
    await single.help()
    expect(importWorker.helpedSent).toBe(sent)
    const pair = queue.beginEarly()
    const both = pair.embed(two)
    await pair.help()
    expect(importWorker.helpedSent).toBe(sent + 1)
    const oracle = await embedder.embed([...one, ...two])
    expect([...(await alone), ...(await both)].map((v) => [...v])).toEqual(oracle.map((v) => [...v]))
  }, 60_000)
})
