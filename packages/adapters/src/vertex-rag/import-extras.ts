import { readMessage } from '../rpc/proto-json.js'
import { replayable } from '../rpc/replay.js'
import { RpcFailure, failure, invalidArgument, rpcStatus, type RpcStatus } from '../rpc/status.js'
import type { RagContext } from './context.js'
import { checkImportedValue, planImportedSchemas, type PlannedSchema } from './metadata.js'
import type { MetadataValueJson } from './resources.js'
import { RagDataSchema, type RagFileMetadataConfigInput } from './schema.js'
import { decodeRead, encodeRead } from './read-trace.js'
import { gcsDestinationPath, locateSources, readSource, writeInside, type SourceRoots } from './sources.js'
import type { RagCorpusState } from './state.js'

/**
 * What importRagFiles does besides reading files (v1beta1 `ragFileMetadataConfig`, and the result
 * sinks of both versions). Google documents where the metadata comes from (a gs:// file or folder
 * — files ending in `metadata_schema.json` / `metadata.json` — or inline JSON) but not the JSON
 * itself; Quarry reads:
 *
 * - schemas: a JSON array of RagDataSchema (`{"key": "year", "schemaDetails": {"type": "INTEGER"}}`),
 *   or one such object; a key the corpus already declares alike is kept, a key declared otherwise
 *   fails the import (FAILED_PRECONDITION) before anything is written;
 * - values: a JSON array of `{"uri": "<an imported file's URI>", "metadata": {"<key>": <MetadataValue>}}`;
 *   every URI must be a file of this import, every value fits its key's schema (checked before
 *   anything is written); the values are given to the file once it is imported (or found
 *   unchanged): a key it has is updated, a new key becomes new RagMetadata.
 *
 * Metadata files are read as imported files are (replayed from the write-ahead log, never re-read),
 * and are not imported as documents themselves.
 */
interface MetadataPlan {
  readonly schemas: readonly PlannedSchema[]
  readonly values: ReadonlyMap<string, readonly { readonly key: string; readonly value: MetadataValueJson }[]>
  /** Real paths of the metadata files read: left out of the import. */
  readonly paths: ReadonlySet<string>
}

const CONFIG = 'importRagFilesConfig.ragFileMetadataConfig'

interface JsonSource {
  readonly json: unknown
  /** Where it came from: the field, and for a file its URI (messages). */
  readonly field: string
  readonly label: string
}

function parse(text: string, field: string, label: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw invalidArgument(field, `${label} is not valid JSON.`)
  }
}

/** The JSON documents of one source: inline text, or the gs:// files (a folder: its files ending in `suffix`). */
async function sourcesOf(ctx: RagContext, inline: string | undefined, gcs: readonly string[] | undefined, field: string, suffix: string, roots: SourceRoots, paths: Set<string>): Promise<JsonSource[]> {
  if (inline !== undefined) return [{ json: parse(inline, `${CONFIG}.inline${field}`, `inline${field}`), field: `${CONFIG}.inline${field}`, label: `inline${field}` }]
  const uris = gcs ?? []
  if (uris.length === 0) return []
  const at = (i: number): string => `${CONFIG}.gcs${field}.uris[${i}]`
  for (const [i, uri] of uris.entries()) if (!uri.startsWith('gs://')) throw invalidArgument(at(i), `"${uri}": metadata is read from gs:// URIs (or given inline).`)
  const limits = { maxFiles: ctx.options.maxImportFiles, maxDepth: ctx.options.maxImportDepth, maxFileBytes: ctx.options.maxFileBytes }
  const located = await replayable('locate', () => locateSources(uris, roots, limits, at))
  if (located.failures.length > 0) throw failure('INVALID_ARGUMENT', `${located.failures[0]?.message ?? ''} (a metadata source)`, `${CONFIG}.gcs${field}`)
  const out: JsonSource[] = []
  for (const file of located.files) {
    // A URI naming a file is read whatever its name; a folder contributes its files ending in the suffix.
    if (!uris.includes(file.uri) && !file.uri.endsWith(suffix)) continue
    const read = await replayable('read', () => readSource(file, ctx.options.maxFileBytes), encodeRead, decodeRead)
    if (!read.ok) throw failure('INVALID_ARGUMENT', `${read.status.message} (a metadata source)`, `${CONFIG}.gcs${field}`)
    paths.add(file.path)
    out.push({ json: parse(new TextDecoder().decode(read.bytes), `${CONFIG}.gcs${field}`, file.uri), field: `${CONFIG}.gcs${field}`, label: file.uri })
  }
  return out
}

function listOf(json: unknown): unknown[] {
  return Array.isArray(json) ? json : [json]
}

/** A reader failure inside a metadata document, named by the document (a file's URI) and the entry. */
function within<T>(source: JsonSource, entry: number, read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (!(error instanceof RpcFailure)) throw error
    throw invalidArgument(source.field, `${source.label}, entry ${entry}: ${error.status.message}`)
  }
}

/** Reads and checks the metadata config (before any file of the import is read). */
export async function planMetadata(ctx: RagContext, corpus: RagCorpusState, config: RagFileMetadataConfigInput, roots: SourceRoots): Promise<MetadataPlan> {
  for (const drive of ['googleDriveMetadataSchemaSource', 'googleDriveMetadataSource'] as const) {
    if (config[drive]) throw failure('FAILED_PRECONDITION', `Quarry reads metadata from gs:// URIs or inline JSON; ${drive} needs Google's service.`, `${CONFIG}.${drive}`)
  }
  const paths = new Set<string>()
  const schemaSources = await sourcesOf(ctx, config.inlineMetadataSchemaSource, config.gcsMetadataSchemaSource?.uris, 'MetadataSchemaSource', 'metadata_schema.json', { importRoots: [], gcsRoot: ctx.options.gcsRoot }, paths)
  const inputs = schemaSources.flatMap((source) =>
    listOf(source.json).map((item, i) => ({ schema: within(source, i, () => readMessage(RagDataSchema, item)), at: source.field })),
  )
  const schemas = planImportedSchemas(ctx, corpus, inputs)
  const valueSources = await sourcesOf(ctx, config.inlineMetadataSource, config.gcsMetadataSource?.uris, 'MetadataSource', 'metadata.json', { importRoots: [], gcsRoot: ctx.options.gcsRoot }, paths)
  const values = new Map<string, { key: string; value: MetadataValueJson }[]>()
  for (const source of valueSources) {
    listOf(source.json).forEach((item, i) => {
      within(source, i, () => {
        const entry = item as { uri?: unknown; metadata?: unknown }
        if (typeof entry !== 'object' || entry === null || typeof entry.uri !== 'string' || typeof entry.metadata !== 'object' || entry.metadata === null || Array.isArray(entry.metadata)) {
          throw invalidArgument('', 'each entry is {"uri": "<an imported file URI>", "metadata": {"<key>": <MetadataValue>}}.')
        }
        const list = values.get(entry.uri) ?? []
        for (const [key, raw] of Object.entries(entry.metadata)) {
          const value = checkImportedValue(corpus, schemas, key, raw, `metadata.${key}`)
          const at = list.findIndex((e) => e.key === key)
          if (at >= 0) list[at] = { key, value }
          else list.push({ key, value })
        }
        values.set(entry.uri, list)
      })
    })
  }
  return { schemas, values, paths }
}

/** An import's per-file outcome, as the result sinks write it (one JSON line each). */
export interface FileResult {
  readonly uri?: string
  readonly ragFile?: string
  readonly result: 'IMPORTED' | 'SKIPPED' | 'FAILED'
  readonly error?: RpcStatus
}

/** The URI a failure's message starts with (every per-file failure of an import names its file first). */
export function uriOfFailure(status: RpcStatus): string | undefined {
  return /^((?:gs|file):\/\/\S*?):\s/.exec(status.message)?.[1]
}

interface SinkPlan {
  /** The gs:// URI of the file written. */
  readonly uri: string
  readonly path: string
}

/**
 * Where a sink's JSONL goes: `<outputUriPrefix>/<name>_<operation id>.jsonl` (Google: "If the uri
 * doesn't end with '/', a '/' will be automatically appended"), mapped under gcsRoot like imports.
 */
export function sinkPlan(ctx: RagContext, prefix: string | undefined, name: string, operationId: string, field: string): SinkPlan {
  if (prefix === undefined || prefix === '') throw invalidArgument(`${field}.outputUriPrefix`, 'outputUriPrefix is required: the gs://bucket/folder the results are written to.')
  const uri = `${prefix.endsWith('/') ? prefix : `${prefix}/`}${name}_${operationId}.jsonl`
  return { uri, path: gcsDestinationPath(uri, ctx.options.gcsRoot, `${field}.outputUriPrefix`) }
}

/**
 * Writes the lines once, when the import runs: the outcome (written, or why not) is recorded, and
 * a replay of the write-ahead log hands it back without writing again — the file was written before
 * the import was acknowledged, and writing it again could overwrite what its reader did with it since.
 */
export async function writeSink(ctx: RagContext, sink: SinkPlan, lines: readonly FileResult[]): Promise<RpcStatus | undefined> {
  const root = ctx.options.gcsRoot as string
  const content = lines.map((l) => `${JSON.stringify(l)}\n`).join('')
  const status = await replayable('sink', async () => (await writeInside(root, sink.path, content)) ?? null)
  return status === null ? undefined : rpcStatus('INTERNAL', `${sink.uri}: ${status.message}`)
}
