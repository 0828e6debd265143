import { parentPort } from 'node:worker_threads'
import { embedderFromRecipe, type Embedder } from '@quarry/core'
import { analysisToWire, analyzeFile, analyzeSource, chunkingAnalyzer, joinVectors, toWire, type Analysis } from './analysis.js'
import type { WorkerMessage, WorkerReply } from './import-worker.js'
import { SharedVectors } from './shared-vectors.js'

/**
 * The import worker's thread (started by import-worker.ts): reads, hashes and chunks the files an
 * import sends it, one message per file, and embeds their chunks when the message names an
 * embedder; embeds an upload's chunk texts; chunks and embeds an upload's bytes while the upload
 * waits for its turn (files.ts `uploadAhead`). Embedders are rebuilt here from their recipe (core's
 * embed/recipes.ts: the same code on the same shared vectors, so the same bits as on the calling
 * thread). Answers move the bytes' and vectors' buffers. Every message gets an answer: the
 * analysis (without vectors if embedding failed: the calling thread then embeds), the vectors of
 * texts, or an error (the calling thread then does the work itself); but texts shared in memory
 * (shared-vectors.ts) get their vectors written there, and no answer but an error nobody awaits
 * (the calling thread embeds what was not written).
 */

// Every answer carries the units chunking read for the first time (import-worker.ts learns them).
chunkingAnalyzer.logUnits()

/** Posts an answer with the units read since the last one. */
function reply(answer: WorkerReply & { readonly id: number }, transfer: ArrayBuffer[] = []): void {
  const units = chunkingAnalyzer.takeUnitLog()
  parentPort?.postMessage(units ? { ...answer, units } : answer, transfer)
}

/** Embedders by the id the calling thread gave them; each recipe is sent once. */
const embedders = new Map<number, Embedder>()

/** The texts' vectors by `embedder`, checked (one per text, each `dimensions` long); throws otherwise. */
async function embedChecked(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  const vectors = await embedder.embed(texts)
  if (vectors.length !== texts.length || vectors.some((v) => v.length !== embedder.dimensions)) throw new Error('the embedder returned vectors of another count or length')
  return vectors
}

/**
 * Embeds the texts this thread takes from the front of `shared` until it meets those the calling
 * thread takes from the back, writing each vector there as it is made. A failure leaves the text
 * unwritten: the calling thread embeds it (and reports the embedder's error).
 */
async function embedShared(embedder: Embedder, texts: readonly string[], shared: SharedVectors): Promise<void> {
  for (let i = shared.claimFront(); i >= 0; i = shared.claimFront()) {
    const [vector] = await embedChecked(embedder, [texts[i] as string])
    shared.write(i, vector as Float32Array)
  }
}

/** The file's chunk vectors, or undefined when there is nothing to embed or the embedder fails (the calling thread then embeds). */
function vectorsOf(analysis: Analysis | undefined, embedder: Embedder | undefined): Promise<Float32Array[] | undefined> {
  if (!embedder || !analysis?.ok) return Promise.resolve(undefined)
  return embedChecked(embedder, analysis.pieces.map((p) => p.text)).catch(() => undefined)
}

async function answer(message: WorkerMessage): Promise<void> {
  if ('forget' in message) {
    embedders.delete(message.forget)
    return
  }
  if ('forgetMemos' in message) {
    chunkingAnalyzer.forgetMemos()
    return
  }
  try {
    const { embed } = message
    if (embed?.recipe) embedders.set(embed.id, embedderFromRecipe(embed.recipe))
    if ('upload' in message) {
      const analysis = await analyzeFile(message.upload)
      const vectors = await vectorsOf(analysis, embed ? embedders.get(embed.id) : undefined)
      const wire = analysisToWire(analysis)
      const flat = vectors && joinVectors(vectors)
      const transfer = [...(wire.ok ? [wire.pieces.buffer as ArrayBuffer] : []), ...(flat ? [flat.buffer as ArrayBuffer] : [])]
      return reply({ id: message.id, analysis: wire, ...(flat ? { vectors: flat } : {}) }, transfer)
    }
    if ('texts' in message) {
      const embedder = embedders.get(message.embed.id)
      if (!embedder) throw new Error('an embedder the thread was not sent')
      // The calling thread takes these vectors from the shared buffer, and awaits no answer.
      if (message.shared) {
        await embedShared(embedder, message.texts, new SharedVectors(message.shared, message.texts.length, embedder.dimensions))
        return
      }
      const flat = joinVectors(await embedChecked(embedder, message.texts))
      return reply({ id: message.id, vectors: flat }, [flat.buffer as ArrayBuffer])
    }
    const result = await analyzeSource(message.job)
    const vectors = await vectorsOf(result.analysis, embed ? embedders.get(embed.id) : undefined)
    const { wire, transfer } = toWire(vectors ? { ...result, vectors } : result)
    reply({ id: message.id, wire }, transfer)
  } catch (error) {
    reply({ id: message.id, error: error instanceof Error ? error.message : String(error) })
  }
}

parentPort?.on('message', (message: WorkerMessage) => void answer(message))
// Loaded: uploads may send their texts now (until this, they embed on the calling thread).
parentPort?.postMessage({ ready: true } satisfies WorkerReply)
// A message that cannot be read has no id to answer: the thread stops, and the calling thread does its files.
parentPort?.on('messageerror', () => process.exit(1))
