import type { Operation } from '../rpc/operations.js'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { RpcFailure, codeName, failure, invalidArgument, rpcStatus, type RpcStatus } from '../rpc/status.js'
import { chunkingOf } from './chunking.js'
import type { RagContext } from './context.js'
import { ingestFile } from './ingest.js'
import type { ImportRoot } from './options.js'
import { locateSources, readSource, type ReadResult } from './sources.js'
import type { ListRagFilesResponseJson, RagFileJson, UploadRagFileResponseJson } from './resources.js'
import { DeleteRagFileRequest, GetRagFileRequest, ImportRagFilesRequest, ListRagFilesRequest, UploadRagFileRequest, requestSchema, type ApiVersion } from './schema.js'
import { fileJson } from './state.js'
import { replayable } from '../rpc/replay.js'

/** Content of an upload: the file's bytes (or text). The Google API carries them in a multipart body, not in the JSON request. */
export type UploadContent = string | Uint8Array

export async function uploadRagFile(ctx: RagContext, version: ApiVersion, request: unknown, content: UploadContent | undefined): Promise<UploadRagFileResponseJson> {
  const { parent, ragFile = {}, uploadRagFileConfig = {} } = readMessage(requestSchema(UploadRagFileRequest, version), request)
  const corpus = ctx.corpus(parent, 'parent')
  const displayName = ragFile.displayName ?? ''
  if (displayName === '') throw invalidArgument('ragFile.displayName', 'displayName is required: the uploaded file\'s name (its extension says how to read it; text is assumed without one).')
  if (content === undefined) throw invalidArgument('content', 'an upload needs the file content (the multipart "file" part over HTTP, the second argument in process).')
  if (uploadRagFileConfig.ragFileMetadataConfig) throw failure('UNIMPLEMENTED', 'Inline metadata on upload is not served; set file metadata with createRagMetadata after the upload.', 'uploadRagFileConfig.ragFileMetadataConfig')
  const chunking = chunkingOf(uploadRagFileConfig, 'uploadRagFileConfig')
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content
  // An upload is one file: it takes maxFileBytes like an imported one.
  if (bytes.length > ctx.options.maxFileBytes) return { error: rpcStatus('INVALID_ARGUMENT', `${displayName}: ${bytes.length} bytes; a file takes at most ${ctx.options.maxFileBytes} (maxFileBytes).`) }
  const readAs = /\.[A-Za-z0-9]+$/.test(displayName) ? displayName : `${displayName}.txt`
  const result = await ingestFile(ctx, corpus, {
    displayName,
    description: ragFile.description,
    userMetadata: ragFile.userMetadata,
    source: { kind: 'upload' },
    readAs,
    label: displayName,
    bytes,
    chunking,
  })
  if (result.kind === 'failed') return { error: rpcStatus('INVALID_ARGUMENT', result.message) }
  return { ragFile: fileJson(result.file, version) }
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

/** `importRoots`: where file:// may read for this caller (a served surface passes the server's); the engine's by default. */
export async function importRagFiles(ctx: RagContext, version: ApiVersion, request: unknown, importRoots: readonly ImportRoot[] | undefined = ctx.options.importRoots): Promise<Operation> {
  const { parent, importRagFilesConfig } = readMessage(requestSchema(ImportRagFilesRequest, version), request)
  const corpus = ctx.corpus(parent, 'parent')
  if (!importRagFilesConfig) throw invalidArgument('importRagFilesConfig', 'importRagFilesConfig is required: give gcsSource.uris.')
  const config = importRagFilesConfig
  for (const other of ['googleDriveSource', 'slackSource', 'jiraSource', 'sharePointSources'] as const) {
    if (config[other]) throw failure('FAILED_PRECONDITION', `Quarry imports gcsSource (gs:// and file:// URIs) only; ${other} needs Google's service.`, `importRagFilesConfig.${other}`)
  }
  for (const sink of ['partialFailureGcsSink', 'partialFailureBigquerySink', 'importResultGcsSink', 'importResultBigquerySink'] as const) {
    if (config[sink]) throw failure('UNIMPLEMENTED', `${sink} is not served: failures are listed in the operation's metadata (genericMetadata.partialFailures).`, `importRagFilesConfig.${sink}`)
  }
  if (config.ragFileMetadataConfig) throw failure('UNIMPLEMENTED', 'Metadata import is not served; set file metadata with createRagMetadata after the import.', 'importRagFilesConfig.ragFileMetadataConfig')
  const uris = config.gcsSource?.uris ?? []
  if (uris.length === 0) throw invalidArgument('importRagFilesConfig.gcsSource.uris', 'give at least one URI (gs://bucket/path or file:///path; a folder imports every file below it).')
  const chunking = chunkingOf(config, 'importRagFilesConfig')

  // What the import found and read is kept by the write-ahead log (rpc/replay.ts): a replay
  // rebuilds the files as they were imported, whatever is on disk now.
  const { files, failures: located } = await replayable('locate', () =>
    locateSources(
      uris,
      { importRoots, gcsRoot: ctx.options.gcsRoot },
      { maxFiles: ctx.options.maxImportFiles, maxDepth: ctx.options.maxImportDepth, maxFileBytes: ctx.options.maxFileBytes },
      (i) => `importRagFilesConfig.gcsSource.uris[${i}]`,
    ),
  )
  const failures: RpcStatus[] = [...located]
  let imported = 0
  let skipped = 0
  for (const f of files) {
    const read = await replayable('read', () => readSource(f, ctx.options.maxFileBytes), encodeRead, decodeRead)
    if (!read.ok) {
      failures.push(read.status)
      continue
    }
    let result
    try {
      const name = uriName(f.uri)
      result = await ingestFile(ctx, corpus, { displayName: name, description: undefined, userMetadata: undefined, source: { kind: 'gcs', uri: f.uri }, readAs: name, label: f.uri, bytes: read.bytes, chunking })
    } catch (error) {
      // The embedder failed on this file: it is not imported (nothing of it was written); the others go on.
      if (!(error instanceof RpcFailure)) throw error
      failures.push(rpcStatus(codeName(error.status.code), `${f.uri}: ${error.status.message}`))
      continue
    }
    if (result.kind === 'failed') failures.push(rpcStatus('INVALID_ARGUMENT', result.message))
    else if (result.kind === 'skipped') skipped++
    else imported++
  }
  // int64 counts as decimal strings; zero counts are proto3 defaults and omitted.
  const response: Record<string, string> = {}
  if (imported > 0) response.importedRagFilesCount = String(imported)
  if (failures.length > 0) response.failedRagFilesCount = String(failures.length)
  if (skipped > 0) response.skippedRagFilesCount = String(skipped)
  return ctx.operation(version, corpus.name, 'ImportRagFilesOperationMetadata', { type: 'ImportRagFilesResponse', value: response }, { ragCorpusId: corpus.id, progressPercentage: 100 }, failures)
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
  for (const c of file.chunks) corpus.index.remove(c.id)
  corpus.files.delete(file.name)
  corpus.updateMs = ctx.now()
  return ctx.operation(version, file.name, 'DeleteOperationMetadata', { type: 'google.protobuf.Empty', value: {} })
}

/** A file read as JSON for the write-ahead log (bytes as base64). */
function encodeRead(read: ReadResult): unknown {
  return read.ok ? { bytes: Buffer.from(read.bytes).toString('base64') } : { status: read.status }
}

function decodeRead(json: unknown): ReadResult {
  const value = json as { bytes?: string; status?: RpcStatus }
  return value.status !== undefined ? { ok: false, status: value.status } : { ok: true, bytes: new Uint8Array(Buffer.from(value.bytes ?? '', 'base64')) }
}
