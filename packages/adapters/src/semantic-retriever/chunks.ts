import { loweredLimit } from '../rpc/limits.js'
import { parseName } from '../rpc/names.js'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { CHUNK_NAME, DOCUMENT_NAME, checkUpdateMask, type RetrieverContext } from './context.js'
import { chunkMetadata, readCustomMetadata } from './custom-metadata.js'
import type { BatchChunksResponseJson, ChunkJson, CustomMetadataJson, EmptyJson, ListChunksResponseJson } from './resources.js'
import {
  BatchCreateChunksRequest,
  BatchDeleteChunksRequest,
  BatchUpdateChunksRequest,
  CreateChunkRequest,
  DeleteChunkRequest,
  GetChunkRequest,
  ListChunksRequest,
  UpdateChunkRequest,
  type ChunkInput,
  type CreateChunkInput,
  type UpdateChunkInput,
} from './schema.js'
import { chunkJson, type ChunkState, type CorpusState, type DocumentState } from './state.js'

/** A validated chunk write, applied only once every chunk of the request has been checked and embedded. */
interface ChunkWrite {
  readonly corpus: CorpusState
  readonly document: DocumentState
  readonly name: string
  readonly text: string
  readonly customMetadata: readonly CustomMetadataJson[]
  /** The existing chunk (updates), absent for creates. */
  readonly existing: ChunkState | undefined
  /** Whether the text changed and needs a new embedding. */
  readonly embed: boolean
}

function checkText(ctx: RetrieverContext, data: ChunkInput['data'], field: string): string {
  const text = data?.stringValue
  if (text === undefined || text === '') throw invalidArgument(field, 'chunk text is required: set data.stringValue to a non-empty string.')
  const tokens = ctx.countTokens(text)
  if (tokens > ctx.options.limits.tokensPerChunk) {
    throw invalidArgument(field, `a chunk holds at most ${ctx.options.limits.tokensPerChunk} tokens; this one has ${tokens}. Split the text into smaller chunks.`)
  }
  return text
}

function planCreate(ctx: RetrieverContext, req: CreateChunkInput, at: string, batchParent: string | undefined, taken: Set<string>): ChunkWrite {
  const parent = req.parent ?? batchParent
  if (batchParent !== undefined && parent !== batchParent) {
    throw invalidArgument(`${at}parent`, `every request's parent must be the batch's parent "${batchParent}"; received "${parent}".`)
  }
  const { corpus, document } = ctx.document(parent, `${at}parent`)
  const chunk = req.chunk ?? {}
  const text = checkText(ctx, chunk.data, `${at}chunk.data.stringValue`)
  const customMetadata = readCustomMetadata(chunk.customMetadata, `${at}chunk.customMetadata`, ctx.options.limits.customMetadata)
  let name: string
  if (chunk.name !== undefined) {
    const parsed = parseName(chunk.name, CHUNK_NAME, `${at}chunk.name`)
    if (parsed.parent !== document.name) throw invalidArgument(`${at}chunk.name`, `chunk.name "${parsed.name}" is not in the parent document "${document.name}".`)
    name = parsed.name
    if (document.chunks.has(name)) throw failure('ALREADY_EXISTS', `Chunk "${name}" already exists.`, `${at}chunk.name`)
    if (taken.has(name)) throw invalidArgument(`${at}chunk.name`, `chunk "${name}" appears twice in this batch.`)
  } else {
    do name = `${document.name}/chunks/${ctx.options.randomId(12)}`
    while (document.chunks.has(name) || taken.has(name))
  }
  taken.add(name)
  return { corpus, document, name, text, customMetadata, existing: undefined, embed: true }
}

function planUpdate(ctx: RetrieverContext, req: UpdateChunkInput, at: string, batchParent: string | undefined, taken: Set<string>): ChunkWrite {
  const chunk = req.chunk ?? {}
  const { corpus, document, chunk: existing } = ctx.chunk(chunk.name, `${at}chunk.name`)
  if (batchParent !== undefined && document.name !== batchParent) {
    throw invalidArgument(`${at}chunk.name`, `chunk "${existing.name}" is not in the batch's parent "${batchParent}".`)
  }
  if (taken.has(existing.name)) throw invalidArgument(`${at}chunk.name`, `chunk "${existing.name}" appears twice in this batch.`)
  taken.add(existing.name)
  const paths = checkUpdateMask(req.updateMask, ['customMetadata', 'data'], 'chunk')
  const text = paths.has('data') ? checkText(ctx, chunk.data, `${at}chunk.data.stringValue`) : existing.text
  const customMetadata = paths.has('customMetadata')
    ? readCustomMetadata(chunk.customMetadata, `${at}chunk.customMetadata`, ctx.options.limits.customMetadata)
    : existing.customMetadata
  return { corpus, document, name: existing.name, text, customMetadata, existing, embed: text !== existing.text }
}

function checkBatch(ctx: RetrieverContext, requests: readonly unknown[] | undefined): void {
  const n = requests?.length ?? 0
  if (n === 0) throw invalidArgument('requests', 'requests is required: give 1 to ' + ctx.options.limits.batchSize + ' requests.')
  // The schema holds Google's 100; this is the engine's own, possibly lower, limit.
  if (n > ctx.options.limits.batchSize) throw loweredLimit(n, ctx.options.limits.batchSize, 'requests', 'limits.batchSize')
}

function checkBatchParent(parent: string | undefined): string | undefined {
  return parent === undefined ? undefined : parseName(parent, DOCUMENT_NAME, 'parent').name
}

/**
 * Embeds the writes that need it and applies them all. Nothing is written before every embedding
 * is in: a failing embedder leaves the corpus as it was. A text with no embedding (a zero vector:
 * no words the embedder knows) is kept, listed and returned with STATE_FAILED, but not searchable.
 */
async function apply(ctx: RetrieverContext, writes: readonly ChunkWrite[]): Promise<ChunkJson[]> {
  const added = new Map<CorpusState, number>()
  for (const w of writes) if (!w.existing) added.set(w.corpus, (added.get(w.corpus) ?? 0) + 1)
  for (const [corpus, n] of added) {
    if (corpus.chunkCount + n > ctx.options.limits.chunksPerCorpus) {
      throw failure('RESOURCE_EXHAUSTED', `A corpus holds at most ${ctx.options.limits.chunksPerCorpus} chunks; "${corpus.name}" has ${corpus.chunkCount} and this request adds ${n}.`)
    }
  }
  const toEmbed = writes.filter((w) => w.embed)
  const vectors = await ctx.embed(toEmbed.map((w) => w.text))
  const vectorOf = new Map(toEmbed.map((w, i) => [w, vectors[i] as Float32Array]))
  return writes.map((w) => {
    w.corpus.documentsFile.changed()
    const vector = vectorOf.get(w) ?? w.corpus.index.get(w.name)?.vector
    const searchable = vector !== undefined && vector.some((x) => x !== 0)
    let chunk: ChunkState
    if (w.existing) {
      chunk = w.existing
      chunk.text = w.text
      chunk.customMetadata = w.customMetadata
      chunk.updateMs = ctx.now()
    } else {
      chunk = { name: w.name, text: w.text, customMetadata: w.customMetadata, state: 'STATE_ACTIVE', ...ctx.stamp() }
      w.document.chunks.set(w.name, chunk)
      w.corpus.chunkCount++
    }
    chunk.state = searchable ? 'STATE_ACTIVE' : 'STATE_FAILED'
    if (searchable) w.corpus.index.upsert({ id: w.name, vector, metadata: chunkMetadata(w.document, chunk) })
    else w.corpus.index.remove(w.name)
    return chunkJson(chunk)
  })
}

export async function createChunk(ctx: RetrieverContext, request: unknown): Promise<ChunkJson> {
  const req = readMessage(CreateChunkRequest, request)
  const [chunk] = await apply(ctx, [planCreate(ctx, req, '', undefined, new Set())])
  return chunk as ChunkJson
}

type Plan<R> = (ctx: RetrieverContext, request: R, at: string, batchParent: string | undefined, taken: Set<string>) => ChunkWrite

/** A batch: 1 to batchSize requests, all planned (checked) before any is embedded or applied. */
async function batch<R>(ctx: RetrieverContext, parent: string | undefined, requests: readonly R[] | undefined, plan: Plan<R>): Promise<BatchChunksResponseJson> {
  checkBatch(ctx, requests)
  const batchParent = checkBatchParent(parent)
  const taken = new Set<string>()
  const writes = (requests ?? []).map((r, i) => plan(ctx, r, `requests[${i}].`, batchParent, taken))
  return { chunks: await apply(ctx, writes) }
}

export async function batchCreateChunks(ctx: RetrieverContext, request: unknown): Promise<BatchChunksResponseJson> {
  const { parent, requests } = readMessage(BatchCreateChunksRequest, request)
  return batch(ctx, parent, requests, planCreate)
}

export async function getChunk(ctx: RetrieverContext, request: unknown): Promise<ChunkJson> {
  const { name } = readMessage(GetChunkRequest, request)
  return chunkJson(ctx.chunk(name, 'name').chunk)
}

export async function updateChunk(ctx: RetrieverContext, request: unknown): Promise<ChunkJson> {
  const req = readMessage(UpdateChunkRequest, request)
  const [chunk] = await apply(ctx, [planUpdate(ctx, req, '', undefined, new Set())])
  return chunk as ChunkJson
}

export async function batchUpdateChunks(ctx: RetrieverContext, request: unknown): Promise<BatchChunksResponseJson> {
  const { parent, requests } = readMessage(BatchUpdateChunksRequest, request)
  return batch(ctx, parent, requests, planUpdate)
}

function remove(corpus: CorpusState, document: DocumentState, chunk: ChunkState): void {
  corpus.documentsFile.changed()
  corpus.index.remove(chunk.name)
  document.chunks.delete(chunk.name)
  corpus.chunkCount--
}

export async function deleteChunk(ctx: RetrieverContext, request: unknown): Promise<EmptyJson> {
  const { name } = readMessage(DeleteChunkRequest, request)
  const { corpus, document, chunk } = ctx.chunk(name, 'name')
  remove(corpus, document, chunk)
  return {}
}

export async function batchDeleteChunks(ctx: RetrieverContext, request: unknown): Promise<EmptyJson> {
  const { parent, requests } = readMessage(BatchDeleteChunksRequest, request)
  checkBatch(ctx, requests)
  const batchParent = checkBatchParent(parent)
  const seen = new Set<string>()
  const targets = (requests ?? []).map((r, i) => {
    const found = ctx.chunk(r.name, `requests[${i}].name`)
    if (batchParent !== undefined && found.document.name !== batchParent) {
      throw invalidArgument(`requests[${i}].name`, `chunk "${found.chunk.name}" is not in the batch's parent "${batchParent}".`)
    }
    if (seen.has(found.chunk.name)) throw invalidArgument(`requests[${i}].name`, `chunk "${found.chunk.name}" appears twice in this batch.`)
    seen.add(found.chunk.name)
    return found
  })
  for (const t of targets) remove(t.corpus, t.document, t.chunk)
  return {}
}

export async function listChunks(ctx: RetrieverContext, request: unknown): Promise<ListChunksResponseJson> {
  const req = readMessage(ListChunksRequest, request)
  const { document } = ctx.document(req.parent, 'parent')
  const page = pageOf([...document.chunks.values()], (c) => c.seq, `listChunks ${document.name}`, req, { defaultSize: 10, maxSize: 100 })
  return omitUnset({ chunks: page.items.map(chunkJson), nextPageToken: page.nextPageToken })
}
