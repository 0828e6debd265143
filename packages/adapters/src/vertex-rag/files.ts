import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { RpcFailure, codeName, failure, invalidArgument, rpcStatus, type RpcStatus } from '../rpc/status.js'
import { chunkingOf } from './chunking.js'
import type { RagContext } from './context.js'
import { ingestFile } from './ingest.js'
import type { ListRagFilesResponseJson, OperationJson, RagFileJson, UploadRagFileResponseJson } from './resources.js'
import { DeleteRagFileRequest, GetRagFileRequest, ImportRagFilesRequest, ListRagFilesRequest, UploadRagFileRequest, requestSchema, type ApiVersion } from './schema.js'
import { fileJson } from './state.js'

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
  const readAs = /\.[A-Za-z0-9]+$/.test(displayName) ? displayName : `${displayName}.txt`
  const result = await ingestFile(ctx, corpus, {
    displayName,
    description: ragFile.description || undefined,
    userMetadata: ragFile.userMetadata || undefined,
    source: { kind: 'upload' },
    readAs,
    label: displayName,
    bytes,
    chunking,
  })
  if (result.kind === 'failed') return { error: rpcStatus('INVALID_ARGUMENT', result.message) }
  return { ragFile: fileJson(result.file, version) }
}

interface Located {
  readonly uri: string
  readonly path: string
}

/** A gcsSource URI → local path: file:// as is, gs://bucket/p under the gcsRoot option. */
function localPath(ctx: RagContext, uri: string, field: string): string {
  if (uri.startsWith('file://')) {
    try {
      return fileURLToPath(uri)
    } catch {
      throw invalidArgument(field, `"${uri}" is not a valid file:// URI (file:///absolute/path).`)
    }
  }
  const gs = /^gs:\/\/([^/]+)(\/.*)?$/.exec(uri)
  if (gs) {
    const root = ctx.options.gcsRoot
    if (root === undefined) throw failure('FAILED_PRECONDITION', `"${uri}" is a Cloud Storage URI; start Quarry with the gcsRoot option (a local folder standing in for Cloud Storage) or import file:// URIs.`, field)
    const base = resolve(root)
    const path = resolve(base, gs[1] as string, `.${gs[2] ?? '/'}`)
    if (path !== base && !path.startsWith(base + sep)) throw invalidArgument(field, `"${uri}" points outside the Cloud Storage folder.`)
    return path
  }
  throw invalidArgument(field, `"${uri}": gcsSource takes gs://bucket/path or file:///path URIs.`)
}

/** Expands a URI to the files it names: itself, or every file below it when it is a folder (sorted). */
function expand(uri: string, path: string): Located[] | RpcStatus {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return rpcStatus('NOT_FOUND', `${uri}: no such file or folder.`)
  }
  if (!stat.isDirectory()) return [{ uri, path }]
  const out: Located[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile()) out.push({ uri: `${uri.replace(/\/+$/, '')}/${relative(path, full).split(sep).join('/')}`, path: full })
    }
  }
  walk(path)
  return out
}

export async function importRagFiles(ctx: RagContext, version: ApiVersion, request: unknown): Promise<OperationJson> {
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

  const failures: RpcStatus[] = []
  const files: Located[] = []
  uris.forEach((uri, i) => {
    const found = expand(uri, localPath(ctx, uri, `importRagFilesConfig.gcsSource.uris[${i}]`))
    if (Array.isArray(found)) files.push(...found)
    else failures.push(found)
  })
  if (files.length > ctx.options.maxImportFiles) {
    throw invalidArgument('importRagFilesConfig.gcsSource.uris', `the URIs name ${files.length} files; one import takes at most ${ctx.options.maxImportFiles}.`)
  }
  let imported = 0
  let skipped = 0
  for (const f of files) {
    let bytes: Uint8Array
    try {
      if (statSync(f.path).size > ctx.options.maxFileBytes) {
        failures.push(rpcStatus('INVALID_ARGUMENT', `${f.uri}: larger than ${ctx.options.maxFileBytes} bytes.`))
        continue
      }
      bytes = readFileSync(f.path)
    } catch (error) {
      failures.push(rpcStatus('NOT_FOUND', `${f.uri}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`))
      continue
    }
    let result
    try {
      result = await ingestFile(ctx, corpus, { displayName: basename(f.path), description: undefined, userMetadata: undefined, source: { kind: 'gcs', uri: f.uri }, readAs: f.path, label: f.uri, bytes, chunking })
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
  return {
    ...(page.items.length > 0 ? { ragFiles: page.items.map((f) => fileJson(f, version)) } : {}),
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
  }
}

export async function deleteRagFile(ctx: RagContext, version: ApiVersion, request: unknown): Promise<OperationJson> {
  const { name } = readMessage(requestSchema(DeleteRagFileRequest, version), request)
  const { corpus, file } = ctx.file(name, 'name')
  for (const c of file.chunks) corpus.index.remove(c.id)
  corpus.files.delete(file.name)
  corpus.updateMs = ctx.now()
  return ctx.operation(version, file.name, 'DeleteOperationMetadata', { type: 'google.protobuf.Empty', value: {} })
}
