import { QuarryError, checkOptionsObject, describe } from '../errors.js'

/**
 * A text embedding model. Quarry calls `embed` with batches of texts on ingest and with the query
 * at search time; results must be `dimensions` long and in the order of the input.
 */
export interface Embedder {
  /** Identifies the model (and its settings): an index refuses a query embedder of another name. */
  readonly name: string
  readonly dimensions: number
  embed(texts: readonly string[]): Promise<Float32Array[]>
}

/** Batching of {@link embedAll}. */
export interface EmbedOptions {
  /** Texts per call to `embed`. @defaultValue 64 */
  batchSize?: number
  /** Calls in flight at once (for remote models). @defaultValue 2 */
  concurrency?: number
  /** Told after every finished batch. */
  onProgress?: (done: number, total: number) => void
}

/**
 * Embeds many texts in batches with bounded concurrency; the output is in input order whatever
 * order the batches finish in. Checks every vector's length and values.
 */
export async function embedAll(embedder: Embedder, texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
  checkTexts(texts, 'embedAll')
  checkOptionsObject(options, ['batchSize', 'concurrency', 'onProgress'], 'batchSize: 64')
  const batchSize = options.batchSize ?? 64
  const concurrency = options.concurrency ?? 2
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new QuarryError('INVALID_OPTION', `batchSize must be a positive integer; received ${describe(batchSize)}.`, { path: 'batchSize' })
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new QuarryError('INVALID_OPTION', `concurrency must be a positive integer; received ${describe(concurrency)}.`, { path: 'concurrency' })
  const out = new Array<Float32Array>(texts.length)
  let next = 0
  let done = 0
  const worker = async (): Promise<void> => {
    while (next < texts.length) {
      const start = next
      next = Math.min(texts.length, next + batchSize)
      const batch = texts.slice(start, next)
      const vectors = await embedder.embed(batch)
      if (vectors.length !== batch.length) {
        throw new QuarryError('INVALID_VECTOR', `embedder "${embedder.name}" returned ${vectors.length} vectors for ${batch.length} texts.`)
      }
      vectors.forEach((v, i) => {
        if (v.length !== embedder.dimensions) {
          throw new QuarryError('DIMENSION_MISMATCH', `embedder "${embedder.name}" returned a ${v.length}-dimensional vector but declares ${embedder.dimensions}.`)
        }
        for (let k = 0; k < v.length; k++) {
          if (!Number.isFinite(v[k])) throw new QuarryError('INVALID_VECTOR', `embedder "${embedder.name}" returned ${v[k]} at [${k}] of the vector for text ${start + i}; vectors must be finite.`)
        }
        out[start + i] = v
      })
      done += batch.length
      options.onProgress?.(done, texts.length)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, Math.ceil(texts.length / batchSize))) }, worker))
  return out
}

/**
 * Throws INVALID_OPTION unless `texts` is an array of strings: what `what` (embedAll, an
 * embedder's embed) takes. Unchecked, a single string or a number in the list was a TypeError
 * from deep inside the embedder.
 */
export function checkTexts(texts: unknown, what: string): asserts texts is readonly string[] {
  if (!Array.isArray(texts)) throw new QuarryError('INVALID_OPTION', `${what} takes an array of texts; received ${describe(texts)}${typeof texts === 'string' ? ' (a single text: [text])' : ''}.`, { path: 'texts' })
  for (let i = 0; i < texts.length; i++) {
    const text: unknown = texts[i]
    if (typeof text !== 'string') throw new QuarryError('INVALID_OPTION', `${what} takes an array of texts (strings); texts[${i}] is ${describe(text)}.`, { path: `texts[${i}]` })
  }
}
