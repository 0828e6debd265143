import { embedderRecipe } from '@quarry/core'
import type { Operation } from '../rpc/operations.js'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage, type Infer } from '../rpc/proto-json.js'
import { RpcFailure, codeName, failure, invalidArgument, rpcStatus, type RpcStatus } from '../rpc/status.js'
import { chunkingOf } from './chunking.js'
import type { RagContext } from './context.js'
import { analyzeSource, type SourceJob } from './analysis.js'
import { ingestFile, type FileInput, type IngestVia } from './ingest.js'
import { IMPORT_WORKER_MIN_FILES, importWorker, type UploadAnalysis } from './import-worker.js'
import { PendingFiles } from './pending-files.js'
import { IMPORT_BATCH_TEXTS, ReadAhead } from './read-ahead.js'
import type { ImportRoot } from './options.js'
import { embedQueueOf, type EarlyEmbedding, type EmbedQueue } from './embed-queue.js'
import { needsThread } from './bounded-analysis.js'
import { locateSources, type SourceFile } from './sources.js'
import type { ListRagFilesResponseJson, MetadataValueJson, RagFileJson, UploadRagFileResponseJson } from './resources.js'
import { DeleteRagFileRequest, GetRagFileRequest, ImportRagFilesRequest, ListRagFilesRequest, UploadRagFileRequest, requestSchema, type ApiVersion } from './schema.js'
import { fileJson, importedFrom, unlistFile, type RagCorpusState } from './state.js'
import { replayable } from '../rpc/replay.js'
import { applyImportedMetadata, storeImportedSchemas } from './metadata.js'
import { planMetadata, sinkPlan, uriOfFailure, writeSink, type FileResult } from './import-extras.js'
import { decodeRead, encodeRead } from './read-trace.js'

/** Content of an upload: the file's bytes (or text). The Google API carries them in a multipart body, not in the JSON request. */
export type UploadContent = string | Uint8Array

export async function uploadRagFile(ctx: RagContext, version: ApiVersion, request: unknown, content: UploadContent | undefined): Promise<UploadRagFileResponseJson> {
  const message = readMessage(requestSchema(UploadRagFileRequest, version), request)
  const corpus = ctx.corpus(message.parent, 'parent')
  const upload = uploadInput(ctx, message, content)
  if ('error' in upload) return upload
  const queue = (): EmbedQueue => embedQueueOf(corpus, ctx.options.embedder, ctx.options.importWorker)
  const embed = (texts: readonly string[]): Promise<Float32Array[]> => queue().embed(texts)
  const via: IngestVia = doneAhead(request, content, upload.input, embed) ?? earlyVia(queue().beginEarly())
  const result = await ingestFile(ctx, corpus, upload.input, via)
  if (result.kind === 'failed') return { error: rpcStatus('INVALID_ARGUMENT', result.message) }
  return { ragFile: fileJson(result.file, version) }
}

/** An upload chunked here whose first chunks are embedded while the rest are chunked. */
function earlyVia(early: EarlyEmbedding): IngestVia {
  return { early: (texts) => early.early(texts), embed: (texts) => early.embed(texts), help: () => early.help() }
}

type UploadMessage = Infer<typeof UploadRagFileRequest>

/** An upload's file as ingest takes it, from its request and content (throws on a bad request). */
function uploadInput(ctx: RagContext, message: UploadMessage, content: UploadContent | undefined): { readonly input: FileInput } | { readonly error: RpcStatus } {
  const { ragFile = {}, uploadRagFileConfig = {} } = message
  const displayName = ragFile.displayName ?? ''
  if (displayName === '') throw invalidArgument('ragFile.displayName', 'displayName is required: the uploaded file\'s name (its extension says how to read it; text is assumed without one).')
  if (content === undefined) throw invalidArgument('content', 'an upload needs the file content (the multipart "file" part over HTTP, the second argument in process).')
  if (uploadRagFileConfig.ragFileMetadataConfig) throw failure('UNIMPLEMENTED', 'Inline metadata on upload is not served; set file metadata with createRagMetadata after the upload.', 'uploadRagFileConfig.ragFileMetadataConfig')
  const chunking = chunkingOf(uploadRagFileConfig, 'uploadRagFileConfig')
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content
  // An upload is one file: it takes maxFileBytes like an imported one.
  if (bytes.length > ctx.options.maxFileBytes) return { error: rpcStatus('INVALID_ARGUMENT', `${displayName}: ${bytes.length} bytes; a file takes at most ${ctx.options.maxFileBytes} (maxFileBytes).`) }
  const readAs = /\.[A-Za-z0-9]+$/.test(displayName) ? displayName : `${displayName}.txt`
  return {
    input: {
      displayName,
      description: ragFile.description,
      userMetadata: ragFile.userMetadata,
      source: { kind: 'upload' },
      readAs,
      label: displayName,
      bytes,
      chunking,
      bounds: ctx.options.fileBounds,
    },
  }
}

/**
 * What the import worker did ahead for this upload (see {@link uploadAhead}), if it read the same
 * content the same way (a request changed since is read again); its vectors serve only the texts
 * they were made of, `embed` the others.
 */
function doneAhead(request: unknown, content: UploadContent | undefined, input: FileInput, embed: (texts: readonly string[]) => Promise<Float32Array[]>): IngestVia | undefined {
  const ahead = typeof request === 'object' && request !== null ? uploadsAhead.get(request) : undefined
  if (!ahead) return undefined
  uploadsAhead.delete(request as object)
  const read = ahead.input
  const same = ahead.content === content && read.readAs === input.readAs && read.chunking.size === input.chunking.size && read.chunking.overlap === input.chunking.overlap && read.bounds === input.bounds
  if (!same) return undefined
  const analysis = ahead.done.then((d) => d.analysis)
  // A replay reads the file itself and never awaits it.
  analysis.catch(() => undefined)
  return { analysis, embed: async (texts) => (await ahead.done).vectorsOf(texts) ?? embed(texts) }
}

/** Uploads chunked and embedded on the import worker while they waited for their turn, by request. */
const uploadsAhead = new WeakMap<object, { readonly content: UploadContent | undefined; readonly input: FileInput; readonly done: Promise<UploadAnalysis> }>()

/** Uploads with the import worker ahead of their turn, at most (each holds its bytes there, then its chunks and vectors here). */
const UPLOADS_AHEAD_MAX = 16
let uploadsAheadNow = 0

/**
 * Starts an upload's chunking and embedding on the import worker while it waits for the writes
 * before it (methods.ts `ahead`): they depend on the request and the engine's embedder alone.
 * The worker hands over the units it read, so the index reads the chunks without reading their
 * words again. A small text file only (the others go to a bounded thread), with an embedder of
 * core's, once the worker is ready, {@link UPLOADS_AHEAD_MAX} at a time.
 */
export function uploadAhead(ctx: RagContext, version: ApiVersion, request: unknown, content: UploadContent | undefined): void {
  if (!ctx.options.importWorker || typeof request !== 'object' || request === null) return
  // Started once (behind a server's log lock, then the engine's).
  if (uploadsAhead.has(request) || uploadsAheadNow >= UPLOADS_AHEAD_MAX) return
  const { embedder } = ctx.options
  if (embedderRecipe(embedder) === undefined) return
  const upload = uploadInput(ctx, readMessage(requestSchema(UploadRagFileRequest, version), request), content)
  if ('error' in upload || needsThread(upload.input)) return
  const done = importWorker.analyzeUpload(upload.input, embedder)
  if (!done) return
  uploadsAheadNow++
  // Awaited in the write's turn (a failure surfaces there); a write abandoned before its turn never awaits it.
  done.then(
    () => void uploadsAheadNow--,
    () => void uploadsAheadNow--,
  )
  uploadsAhead.set(request, { content, input: upload.input, done })
}

/** One file of an import: read (or handed back on replay), ingested through the read-ahead, its metadata given. */
async function importOne(
  ctx: RagContext,
  corpus: RagCorpusState,
  job: { i: number; file: SourceFile; ahead: ReadAhead; pending: PendingFiles; inputOf: (f: SourceFile, bytes: Uint8Array) => FileInput; metadata: readonly { readonly key: string; readonly value: MetadataValueJson }[] },
): Promise<FileResult> {
  const { i, file: f, ahead } = job
  const read = await replayable('read', () => ahead.read(i), encodeRead, decodeRead)
  if (!read.ok) return { uri: f.uri, result: 'FAILED', error: read.status }
  let result
  try {
    result = await ingestFile(ctx, corpus, job.inputOf(f, read.bytes), { ...ahead.analysis(i, read.bytes), embed: (texts) => ahead.embed(i, texts), pending: job.pending })
  } catch (error) {
    // The embedder failed on this file: it is not imported (nothing of it was written); the others go on.
    if (!(error instanceof RpcFailure)) throw error
    return { uri: f.uri, result: 'FAILED', error: rpcStatus(codeName(error.status.code), `${f.uri}: ${error.status.message}`) }
  }
  if (result.kind === 'failed') return { uri: f.uri, result: 'FAILED', error: rpcStatus('INVALID_ARGUMENT', result.message) }
  applyImportedMetadata(ctx, corpus, result.file, job.metadata)
  return { uri: f.uri, ragFile: result.file.name, result: result.kind === 'skipped' ? 'SKIPPED' : 'IMPORTED' }
}

/** The file name a URI ends in, as the user wrote it (a link keeps its own name and extension). */
function uriName(uri: string): string {
  const last = uri.slice(uri.lastIndexOf('/') + 1)
  try {
    return decodeURIComponent(last)
  } catch {
    return last
  }
}

/**
 * `importRoots`: where file:// may read for this caller (a served surface passes the server's); the
 * engine's by default. With `ragFileMetadataConfig` (v1beta1) the metadata is read and checked
 * first and given to the files (import-extras.ts); with `importResultGcsSink` /
 * `partialFailureGcsSink` each file's outcome is written as JSON lines under gcsRoot.
 */
export async function importRagFiles(ctx: RagContext, version: ApiVersion, request: unknown, importRoots: readonly ImportRoot[] | undefined = ctx.options.importRoots): Promise<Operation> {
  const { parent, importRagFilesConfig } = readMessage(requestSchema(ImportRagFilesRequest, version), request)
  const corpus = ctx.corpus(parent, 'parent')
  if (!importRagFilesConfig) throw invalidArgument('importRagFilesConfig', 'importRagFilesConfig is required: give gcsSource.uris.')
  const config = importRagFilesConfig
  for (const other of ['googleDriveSource', 'slackSource', 'jiraSource', 'sharePointSources'] as const) {
    if (config[other]) throw failure('FAILED_PRECONDITION', `Quarry imports gcsSource (gs:// and file:// URIs) only; ${other} needs Google's service.`, `importRagFilesConfig.${other}`)
  }
  for (const sink of ['partialFailureBigquerySink', 'importResultBigquerySink'] as const) {
    if (config[sink]) throw failure('UNIMPLEMENTED', `${sink} is not served: write the results to Cloud Storage (${sink.replace('Bigquery', 'Gcs')}, under gcsRoot) or read genericMetadata.partialFailures of the operation.`, `importRagFilesConfig.${sink}`)
  }
  const uris = config.gcsSource?.uris ?? []
  if (uris.length === 0) throw invalidArgument('importRagFilesConfig.gcsSource.uris', 'give at least one URI (gs://bucket/path or file:///path; a folder imports every file below it).')
  const chunking = chunkingOf(config, 'importRagFilesConfig')
  // The operation's id names the sink files, so with a sink it is drawn first (without one, last, as
  // before: the ids of an import without sinks do not move); the sinks are checked before anything is read.
  const operationId = config.importResultGcsSink || config.partialFailureGcsSink ? ctx.numericId() : undefined
  const sinks = {
    result: config.importResultGcsSink ? sinkPlan(ctx, config.importResultGcsSink.outputUriPrefix, 'import_result', operationId as string, 'importRagFilesConfig.importResultGcsSink') : undefined,
    failures: config.partialFailureGcsSink ? sinkPlan(ctx, config.partialFailureGcsSink.outputUriPrefix, 'partial_failures', operationId as string, 'importRagFilesConfig.partialFailureGcsSink') : undefined,
  }
  const metadata = config.ragFileMetadataConfig ? await planMetadata(ctx, corpus, config.ragFileMetadataConfig, { importRoots, gcsRoot: ctx.options.gcsRoot }) : undefined

  // What the import found and read is kept by the write-ahead log (rpc/replay.ts): a replay
  // rebuilds the files as they were imported, whatever is on disk now.
  const located = await replayable('locate', () =>
    locateSources(
      uris,
      { importRoots, gcsRoot: ctx.options.gcsRoot },
      { maxFiles: ctx.options.maxImportFiles, maxDepth: ctx.options.maxImportDepth, maxFileBytes: ctx.options.maxFileBytes },
      (i) => `importRagFilesConfig.gcsSource.uris[${i}]`,
    ),
  )
  // Metadata files below an imported folder are the import's metadata, not documents.
  const files = located.files.filter((f) => !metadata?.paths.has(f.path))
  if (metadata) {
    const imported = new Set(files.map((f) => f.uri))
    for (const uri of metadata.values.keys()) {
      if (!imported.has(uri)) throw invalidArgument('importRagFilesConfig.ragFileMetadataConfig', `the metadata names ${uri}, which is not a file of this import (its gcsSource.uris name the files: ${[...imported].slice(0, 3).join(', ')}${imported.size > 3 ? ', ...' : ''}).`)
    }
    storeImportedSchemas(ctx, corpus, metadata.schemas)
  }
  const results: FileResult[] = located.failures.map((error) => omitUnset({ uri: uriOfFailure(error), result: 'FAILED' as const, error }))
  const inputOf = (f: SourceFile, bytes: Uint8Array): FileInput => {
    const name = uriName(f.uri)
    return { displayName: name, description: undefined, userMetadata: undefined, source: { kind: 'gcs', uri: f.uri }, readAs: name, label: f.uri, bytes, chunking, bounds: ctx.options.fileBounds }
  }
  // Files are read, chunked and embedded ahead in batches across files, and go into the index in
  // batches; each file's read and vectors are still taken (and recorded) in file order.
  const jobOf = (f: SourceFile): SourceJob => {
    const name = uriName(f.uri)
    return { file: f, maxBytes: ctx.options.maxFileBytes, readAs: name, label: f.uri, chunking, bounds: ctx.options.fileBounds, skipSha256: importedFrom(corpus, f.uri)?.sha256 }
  }
  const onWorker = ctx.options.importWorker && (files.length >= IMPORT_WORKER_MIN_FILES || importWorker.running)
  const analyze = onWorker ? (job: SourceJob, embed: boolean) => importWorker.analyze(job, embed ? ctx.options.embedder : undefined) : analyzeSource
  const ahead = new ReadAhead({ embedder: ctx.options.embedder, files, jobOf, analyze, balance: onWorker && embedderRecipe(ctx.options.embedder) !== undefined })
  const pending = new PendingFiles(corpus)
  try {
    for (const [i, f] of files.entries()) {
      results.push(await importOne(ctx, corpus, { i, file: f, ahead, pending, inputOf, metadata: metadata?.values.get(f.uri) ?? [] }))
      if (pending.chunks >= IMPORT_BATCH_TEXTS) await pending.flush()
    }
  } finally {
    await pending.flush()
  }
  const failures: RpcStatus[] = results.flatMap((r) => (r.error ? [r.error] : []))
  const count = (kind: FileResult['result']): number => results.filter((r) => r.result === kind).length
  // int64 counts as decimal strings; zero counts are proto3 defaults and omitted.
  const response: Record<string, string> = {}
  if (sinks.failures) {
    const problem = await writeSink(ctx, sinks.failures, results.filter((r) => r.result === 'FAILED'))
    if (problem) failures.push(problem)
    else response.partialFailuresGcsPath = sinks.failures.uri
  }
  if (sinks.result) {
    const problem = await writeSink(ctx, sinks.result, results)
    if (problem) failures.push(problem)
  }
  if (count('IMPORTED') > 0) response.importedRagFilesCount = String(count('IMPORTED'))
  if (count('FAILED') > 0) response.failedRagFilesCount = String(count('FAILED'))
  if (count('SKIPPED') > 0) response.skippedRagFilesCount = String(count('SKIPPED'))
  return ctx.operation(version, corpus.name, 'ImportRagFilesOperationMetadata', { type: 'ImportRagFilesResponse', value: response }, { ragCorpusId: corpus.id, progressPercentage: 100 }, failures, operationId ?? ctx.numericId())
}

export async function getRagFile(ctx: RagContext, version: ApiVersion, request: unknown): Promise<RagFileJson> {
  const { name } = readMessage(requestSchema(GetRagFileRequest, version), request)
  return fileJson(ctx.file(name, 'name').file, version)
}

export async function listRagFiles(ctx: RagContext, version: ApiVersion, request: unknown): Promise<ListRagFilesResponseJson> {
  const req = readMessage(requestSchema(ListRagFilesRequest, version), request)
  const corpus = ctx.corpus(req.parent, 'parent')
  const page = pageOf([...corpus.files.values()], (f) => f.seq, `listRagFiles ${corpus.name}`, req, { defaultSize: 10, maxSize: 100 })
  return omitUnset({ ragFiles: page.items.map((f) => fileJson(f, version)), nextPageToken: page.nextPageToken })
}

export async function deleteRagFile(ctx: RagContext, version: ApiVersion, request: unknown): Promise<Operation> {
  const { name } = readMessage(requestSchema(DeleteRagFileRequest, version), request)
  const { corpus, file } = ctx.file(name, 'name')
  corpus.index.removeMany(file.chunks.map((c) => c.id))
  unlistFile(corpus, file)
  corpus.updateMs = ctx.now()
  return ctx.operation(version, file.name, 'DeleteOperationMetadata', { type: 'google.protobuf.Empty', value: {} })
}
