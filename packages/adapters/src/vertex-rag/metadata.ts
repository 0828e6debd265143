import type { Operation } from '../rpc/operations.js'
import { parseRfc3339 } from '../rpc/clock.js'
import { RESOURCE_ID } from '../rpc/names.js'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import type { RagContext } from './context.js'
import { reindexFile } from './ingest.js'
import type { ListRagDataSchemasResponseJson, ListRagMetadataResponseJson, MetadataValueJson, RagDataSchemaJson, RagMetadataJson } from './resources.js'
import {
  BatchCreateRagDataSchemasRequest,
  BatchCreateRagMetadataRequest,
  BatchDeleteRagDataSchemasRequest,
  BatchDeleteRagMetadataRequest,
  CreateRagDataSchemaRequest,
  CreateRagMetadataRequest,
  DOCUMENTED,
  DeleteRagDataSchemaRequest,
  DeleteRagMetadataRequest,
  GetRagDataSchemaRequest,
  GetRagMetadataRequest,
  ListRagDataSchemasRequest,
  ListRagMetadataRequest,
  UpdateRagMetadataRequest,
  MetadataValue,
  ScalarMetadataValue,
  type MetadataValueInput,
  type RagDataSchemaInput,
  type RagMetadataInput,
} from './schema.js'
import { ragMetadataJson, schemaJson, type RagCorpusState, type RagDataSchemaState, type RagFileState, type RagMetadataState } from './state.js'

/**
 * v1beta1 metadata: RagDataSchemas declare a key's type for a corpus; RagMetadata gives a file a
 * key's value. A file's values are on every one of its chunk records, where `metadataFilter`
 * reads them (typed by the schema: a quoted RFC 3339 time compares as a DATETIME, and so on).
 */
const TYPES = { INTEGER: 'number', FLOAT: 'number', STRING: 'string', DATETIME: 'datetime', BOOLEAN: 'boolean', LIST: 'list' } as const
const BATCH_MAX = DOCUMENTED.schemaBatchCreate.max

function newId(ctx: RagContext, given: string | undefined, field: string, taken: (id: string) => boolean): string {
  if (given !== undefined && given !== '') {
    if (!RESOURCE_ID.test(given)) throw invalidArgument(field, `"${given}" is not a valid id: up to 40 of a-z, 0-9 and -, not starting or ending with -.`)
    return given
  }
  let id: string
  do id = ctx.numericId()
  while (taken(id))
  return id
}

// ---------------------------------------------------------------- schemas

/**
 * A checked schema, its creation time read; its sequence number is taken only when it is stored
 * (`storeSchema`), so a batch refused after planning leaves the state as it was (the write-ahead
 * log replays only applied writes).
 */
export interface PlannedSchema {
  readonly schema: Omit<RagDataSchemaState, 'seq' | 'createMs' | 'updateMs'>
  readonly ms: number
}

function planSchema(ctx: RagContext, corpus: RagCorpusState, input: RagDataSchemaInput | undefined, givenId: string | undefined, at: string, keys: Set<string>): PlannedSchema {
  const key = input?.key ?? ''
  if (key === '') throw invalidArgument(`${at}ragDataSchema.key`, 'key is required: the metadata key this schema types.')
  if (keys.has(key) || [...corpus.schemas.values()].some((s) => s.key === key)) throw failure('ALREADY_EXISTS', `A RagDataSchema for key "${key}" already exists in ${corpus.name}.`, `${at}ragDataSchema.key`)
  const details = input?.schemaDetails ?? {}
  const typeName = details.type
  if (typeName === undefined || typeName === 'DATA_TYPE_UNSPECIFIED') {
    throw invalidArgument(`${at}ragDataSchema.schemaDetails.type`, 'type is required: INTEGER, FLOAT, STRING, DATETIME, BOOLEAN or LIST.')
  }
  const type = TYPES[typeName]
  for (const file of corpus.files.values()) {
    for (const m of file.metadata.values()) {
      if (m.key === key && typeOfValue(m.value) !== type) {
        throw failure('FAILED_PRECONDITION', `RagFile ${file.name} has a ${typeOfValue(m.value)} value for "${key}"; a ${typeName} schema would not describe it. Update or delete that metadata first.`, `${at}ragDataSchema.schemaDetails.type`)
      }
    }
  }
  keys.add(key)
  const id = newId(ctx, givenId, `${at}ragDataSchemaId`, (x) => corpus.schemas.has(`${corpus.name}/ragDataSchemas/${x}`))
  const name = `${corpus.name}/ragDataSchemas/${id}`
  if (corpus.schemas.has(name)) throw failure('ALREADY_EXISTS', `RagDataSchema "${name}" already exists.`, `${at}ragDataSchemaId`)
  return { schema: { name, key, details, type }, ms: ctx.now() }
}

function storeSchema(ctx: RagContext, corpus: RagCorpusState, planned: PlannedSchema): RagDataSchemaState {
  const schema: RagDataSchemaState = { ...planned.schema, ...ctx.stamp(planned.ms) }
  corpus.schemas.set(schema.name, schema)
  return schema
}

export async function createRagDataSchema(ctx: RagContext, request: unknown): Promise<RagDataSchemaJson> {
  const req = readMessage(CreateRagDataSchemaRequest, request)
  const corpus = ctx.corpus(req.parent, 'parent')
  return schemaJson(storeSchema(ctx, corpus, planSchema(ctx, corpus, req.ragDataSchema, req.ragDataSchemaId, '', new Set())))
}

export async function batchCreateRagDataSchemas(ctx: RagContext, request: unknown): Promise<Operation> {
  const req = readMessage(BatchCreateRagDataSchemasRequest, request)
  const corpus = ctx.corpus(req.parent, 'parent')
  const requests = checkBatch(req.requests, 'requests')
  const keys = new Set<string>()
  const planned = requests.map((r, i) => {
    if (r.parent && r.parent !== corpus.name) throw invalidArgument(`requests[${i}].parent`, `every request's parent must be "${corpus.name}".`)
    return planSchema(ctx, corpus, r.ragDataSchema, r.ragDataSchemaId, `requests[${i}].`, keys)
  })
  if (new Set(planned.map((p) => p.schema.name)).size !== planned.length) throw invalidArgument('requests', 'two requests name the same ragDataSchemaId.')
  const stored = planned.map((p) => storeSchema(ctx, corpus, p))
  return ctx.operation('v1beta1', corpus.name, 'BatchCreateRagDataSchemasOperationMetadata', { type: 'BatchCreateRagDataSchemasResponse', value: { ragDataSchemas: stored.map(schemaJson) } })
}

export async function getRagDataSchema(ctx: RagContext, request: unknown): Promise<RagDataSchemaJson> {
  const { name } = readMessage(GetRagDataSchemaRequest, request)
  return schemaJson(ctx.schema(name, 'name').schema)
}

export async function listRagDataSchemas(ctx: RagContext, request: unknown): Promise<ListRagDataSchemasResponseJson> {
  const req = readMessage(ListRagDataSchemasRequest, request)
  const corpus = ctx.corpus(req.parent, 'parent')
  const page = pageOf([...corpus.schemas.values()], (s) => s.seq, `listRagDataSchemas ${corpus.name}`, req, { defaultSize: 100, maxSize: 500 })
  return omitUnset({ ragDataSchemas: page.items.map(schemaJson), nextPageToken: page.nextPageToken })
}

export async function deleteRagDataSchema(ctx: RagContext, request: unknown): Promise<Record<string, never>> {
  const { name } = readMessage(DeleteRagDataSchemaRequest, request)
  const { corpus, schema } = ctx.schema(name, 'name')
  corpus.schemas.delete(schema.name)
  return {}
}

export async function batchDeleteRagDataSchemas(ctx: RagContext, request: unknown): Promise<Operation> {
  const req = readMessage(BatchDeleteRagDataSchemasRequest, request)
  const corpus = ctx.corpus(req.parent, 'parent')
  const names = checkBatch(req.names, 'names')
  const found = names.map((n, i) => {
    const { corpus: owner, schema } = ctx.schema(n, `names[${i}]`)
    if (owner !== corpus) throw invalidArgument(`names[${i}]`, `"${n}" is not in "${corpus.name}".`)
    return schema
  })
  for (const s of found) corpus.schemas.delete(s.name)
  return ctx.operation('v1beta1', corpus.name, 'DeleteOperationMetadata', { type: 'google.protobuf.Empty', value: {} })
}

// ---------------------------------------------------------------- file metadata

function typeOfValue(v: MetadataValueJson): 'number' | 'string' | 'datetime' | 'boolean' | 'list' {
  if ('intValue' in v || 'floatValue' in v) return 'number'
  if ('strValue' in v) return 'string'
  if ('datetimeValue' in v) return 'datetime'
  if ('boolValue' in v) return 'boolean'
  return 'list'
}

function readScalar(v: Omit<MetadataValueInput, 'listValue'>, field: string): MetadataValueJson | undefined {
  if (v.intValue !== undefined) return { intValue: String(v.intValue) }
  if (v.floatValue !== undefined) return { floatValue: v.floatValue }
  if (v.strValue !== undefined) return { strValue: v.strValue }
  if (v.boolValue !== undefined) return { boolValue: v.boolValue }
  if (v.datetimeValue !== undefined) {
    if (parseRfc3339(v.datetimeValue) === undefined) throw invalidArgument(`${field}.datetimeValue`, `datetimeValue must be RFC 3339 text like "2024-05-01T12:00:00Z"; received "${v.datetimeValue}".`)
    return { datetimeValue: v.datetimeValue }
  }
  return undefined
}

/** Checks a MetadataValue: exactly one value; list members are scalars (no nested lists). */
function readValue(v: MetadataValueInput | undefined, field: string): MetadataValueJson {
  if (v === undefined) throw invalidArgument(field, 'value is required: one of intValue, floatValue, strValue, datetimeValue, boolValue, listValue.')
  const scalar = readScalar(v, field)
  if (scalar) return scalar
  if (v.listValue !== undefined) {
    const values = (v.listValue.values ?? []).map((x, i) => {
      const at = `${field}.listValue.values[${i}]`
      const member = readMessage(ScalarMetadataValue, x, at)
      const scalar = readScalar(member, at)
      if (!scalar) throw invalidArgument(at, 'a list member sets exactly one of intValue, floatValue, strValue, datetimeValue, boolValue.')
      return scalar
    })
    return { listValue: omitUnset({ values }) }
  }
  throw invalidArgument(field, 'value is required: one of intValue, floatValue, strValue, datetimeValue, boolValue, listValue.')
}

function planMetadata(corpus: RagCorpusState, file: RagFileState, input: RagMetadataInput | undefined, at: string, keys: Set<string>, replacing?: RagMetadataState): { key: string; value: MetadataValueJson } {
  const user = input?.userSpecifiedMetadata
  const key = user?.key ?? ''
  if (key === '') throw invalidArgument(`${at}userSpecifiedMetadata.key`, 'key is required.')
  const value = readValue(user?.value, `${at}userSpecifiedMetadata.value`)
  const schema = [...corpus.schemas.values()].find((s) => s.key === key)
  if (schema?.type !== undefined && schema.type !== typeOfValue(value)) {
    throw invalidArgument(`${at}userSpecifiedMetadata.value`, `the RagDataSchema of "${key}" says ${String(schema.details.type)}; this value is a ${typeOfValue(value)}.`)
  }
  const duplicate = [...file.metadata.values()].some((m) => m.key === key && m !== replacing)
  if (duplicate || keys.has(key)) throw failure('ALREADY_EXISTS', `RagFile ${file.name} already has metadata "${key}"; update it instead.`, `${at}userSpecifiedMetadata.key`)
  keys.add(key)
  return { key, value }
}

export async function createRagMetadata(ctx: RagContext, request: unknown): Promise<RagMetadataJson> {
  const req = readMessage(CreateRagMetadataRequest, request)
  const { corpus, file } = ctx.file(req.parent, 'parent')
  const { key, value } = planMetadata(corpus, file, req.ragMetadata, 'ragMetadata.', new Set())
  const id = newId(ctx, req.ragMetadataId, 'ragMetadataId', (x) => file.metadata.has(`${file.name}/ragMetadata/${x}`))
  const name = `${file.name}/ragMetadata/${id}`
  if (file.metadata.has(name)) throw failure('ALREADY_EXISTS', `RagMetadata "${name}" already exists.`, 'ragMetadataId')
  const m: RagMetadataState = { name, key, value, ...ctx.stamp() }
  file.metadata.set(name, m)
  reindexFile(corpus, file)
  return ragMetadataJson(m)
}

export async function batchCreateRagMetadata(ctx: RagContext, request: unknown): Promise<Operation> {
  const req = readMessage(BatchCreateRagMetadataRequest, request)
  const { corpus, file } = ctx.file(req.parent, 'parent')
  const requests = checkBatch(req.requests, 'requests')
  const keys = new Set<string>()
  const ids = new Set<string>()
  const planned = requests.map((r, i) => {
    if (r.parent && r.parent !== file.name) throw invalidArgument(`requests[${i}].parent`, `every request's parent must be "${file.name}".`)
    const kv = planMetadata(corpus, file, r.ragMetadata, `requests[${i}].ragMetadata.`, keys)
    const id = newId(ctx, r.ragMetadataId, `requests[${i}].ragMetadataId`, (x) => ids.has(x) || file.metadata.has(`${file.name}/ragMetadata/${x}`))
    if (ids.has(id) || file.metadata.has(`${file.name}/ragMetadata/${id}`)) throw failure('ALREADY_EXISTS', `RagMetadata id "${id}" is taken.`, `requests[${i}].ragMetadataId`)
    ids.add(id)
    return { ...kv, name: `${file.name}/ragMetadata/${id}` }
  })
  const created = planned.map((p) => {
    const m: RagMetadataState = { ...p, ...ctx.stamp() }
    file.metadata.set(m.name, m)
    return m
  })
  reindexFile(corpus, file)
  return ctx.operation('v1beta1', file.name, 'BatchCreateRagMetadataOperationMetadata', { type: 'BatchCreateRagMetadataResponse', value: { ragMetadata: created.map(ragMetadataJson) } })
}

export async function updateRagMetadata(ctx: RagContext, request: unknown): Promise<RagMetadataJson> {
  const req = readMessage(UpdateRagMetadataRequest, request)
  const { corpus, file, metadata } = ctx.ragMetadata(req.ragMetadata?.name, 'ragMetadata.name')
  const { key, value } = planMetadata(corpus, file, req.ragMetadata, 'ragMetadata.', new Set(), metadata)
  metadata.key = key
  metadata.value = value
  metadata.updateMs = ctx.now()
  reindexFile(corpus, file)
  return ragMetadataJson(metadata)
}

export async function getRagMetadata(ctx: RagContext, request: unknown): Promise<RagMetadataJson> {
  const { name } = readMessage(GetRagMetadataRequest, request)
  return ragMetadataJson(ctx.ragMetadata(name, 'name').metadata)
}

export async function listRagMetadata(ctx: RagContext, request: unknown): Promise<ListRagMetadataResponseJson> {
  const req = readMessage(ListRagMetadataRequest, request)
  const { file } = ctx.file(req.parent, 'parent')
  const page = pageOf([...file.metadata.values()], (m) => m.seq, `listRagMetadata ${file.name}`, req, { defaultSize: 100, maxSize: 500 })
  return omitUnset({ ragMetadata: page.items.map(ragMetadataJson), nextPageToken: page.nextPageToken })
}

export async function deleteRagMetadata(ctx: RagContext, request: unknown): Promise<Record<string, never>> {
  const { name } = readMessage(DeleteRagMetadataRequest, request)
  const { corpus, file, metadata } = ctx.ragMetadata(name, 'name')
  file.metadata.delete(metadata.name)
  reindexFile(corpus, file)
  return {}
}

export async function batchDeleteRagMetadata(ctx: RagContext, request: unknown): Promise<Operation> {
  const req = readMessage(BatchDeleteRagMetadataRequest, request)
  const { corpus, file } = ctx.file(req.parent, 'parent')
  const names = checkBatch(req.names, 'names')
  const found = names.map((n, i) => {
    const { file: owner, metadata } = ctx.ragMetadata(n, `names[${i}]`)
    if (owner !== file) throw invalidArgument(`names[${i}]`, `"${n}" is not metadata of "${file.name}".`)
    return metadata
  })
  for (const m of found) file.metadata.delete(m.name)
  reindexFile(corpus, file)
  return ctx.operation('v1beta1', file.name, 'DeleteOperationMetadata', { type: 'google.protobuf.Empty', value: {} })
}

/** A batch is not empty; its size (at most 500, Google's) is a limit of the request schema. */
function checkBatch<T>(items: readonly T[] | undefined, field: string): readonly T[] {
  if ((items?.length ?? 0) === 0) throw invalidArgument(field, `${field} is required: 1 to ${BATCH_MAX} entries.`)
  return items as readonly T[]
}

// ---------------------------------------------------------------- metadata imported with files (importRagFiles' ragFileMetadataConfig)

/** Schemas an import declares: new keys planned (stored with `storeImportedSchemas`), keys already declared alike kept. */
export function planImportedSchemas(ctx: RagContext, corpus: RagCorpusState, inputs: readonly { readonly schema: RagDataSchemaInput; readonly at: string }[]): PlannedSchema[] {
  const keys = new Set<string>()
  const planned: PlannedSchema[] = []
  for (const { schema, at } of inputs) {
    const existing = [...corpus.schemas.values()].find((s) => s.key === schema.key)
    if (existing) {
      if (JSON.stringify(existing.details) !== JSON.stringify(schema.schemaDetails ?? {})) {
        throw failure('FAILED_PRECONDITION', `${corpus.name} already has a RagDataSchema for "${existing.key}" with other details (${JSON.stringify(existing.details)}); delete it first or import the same details.`, at)
      }
      continue
    }
    if (keys.has(schema.key ?? '')) continue
    planned.push(planSchema(ctx, corpus, schema, undefined, `${at}.`, keys))
  }
  return planned
}

export function storeImportedSchemas(ctx: RagContext, corpus: RagCorpusState, planned: readonly PlannedSchema[]): void {
  for (const p of planned) storeSchema(ctx, corpus, p)
}

/** Checks an imported value (a MetadataValue as JSON) against the key's schema, existing or planned. */
export function checkImportedValue(corpus: RagCorpusState, planned: readonly PlannedSchema[], key: string, raw: unknown, at: string): MetadataValueJson {
  if (key === '') throw invalidArgument(at, 'a metadata key is empty.')
  const value = readValue(readMessage(MetadataValue, raw, at), at)
  const schema = [...corpus.schemas.values(), ...planned.map((p) => p.schema)].find((s) => s.key === key)
  if (schema?.type !== undefined && schema.type !== typeOfValue(value)) {
    throw invalidArgument(at, `the RagDataSchema of "${key}" says ${String(schema.details.type)}; this value is a ${typeOfValue(value)}.`)
  }
  return value
}

/** Gives a file the imported values: a key it has is updated, a new key gets new RagMetadata; its chunks are reindexed. */
export function applyImportedMetadata(ctx: RagContext, corpus: RagCorpusState, file: RagFileState, entries: readonly { readonly key: string; readonly value: MetadataValueJson }[]): void {
  if (entries.length === 0) return
  for (const { key, value } of entries) {
    const existing = [...file.metadata.values()].find((m) => m.key === key)
    if (existing) {
      existing.value = value
      existing.updateMs = ctx.now()
      continue
    }
    const id = newId(ctx, undefined, 'ragMetadataId', (x) => file.metadata.has(`${file.name}/ragMetadata/${x}`))
    const m: RagMetadataState = { name: `${file.name}/ragMetadata/${id}`, key, value, ...ctx.stamp() }
    file.metadata.set(m.name, m)
  }
  reindexFile(corpus, file)
}
