import { UNARY, longRunningShape, method, pagedShape } from '../rpc/methods.js'
import { locationAndIamMixin, operationsMixin } from '../rpc/mixins.js'
import type { RagContext } from './context.js'
import type { ImportRoot } from './options.js'
import { createRagCorpus, deleteRagCorpus, getRagCorpus, listRagCorpora, updateRagCorpus } from './corpora.js'
import { deleteRagFile, getRagFile, importRagFiles, listRagFiles, uploadAhead, uploadRagFile } from './files.js'
import * as metadata from './metadata.js'
import type { ContextJson, ImportRagFilesResponseJson, RagCorpusJson, RagDataSchemaJson, RagEngineConfigJson, RagMetadataJson } from './resources.js'
import { retrieveContexts } from './retrieve.js'
import { augmentPrompt } from './augment.js'
import { asyncRetrieveContexts } from './async-retrieve.js'
import { askContexts, corroborateContent } from './model-hooks.js'
import { getRagEngineConfig, updateRagEngineConfig } from './engine-config.js'
import type { ApiVersion } from './schema.js'

/** What a RAG method runs on: the engine's state and the API version of the surface it was called on. */
export interface RagCall {
  readonly ctx: RagContext
  readonly version: ApiVersion
  /** Where file:// imports may read on this surface (a served surface: the server's roots). */
  readonly importRoots: readonly ImportRoot[] | undefined
}

type Empty = Record<string, never>
const L = 'projects/*/locations/*'
const C = `${L}/ragCorpora/*`
const F = `${C}/ragFiles/*`
const S = `${C}/ragDataSchemas/*`
const M = `${F}/ragMetadata/*`
const BETA = ['v1beta1']
const read = false
const write = true

/** google.cloud.aiplatform.{v1,v1beta1}.VertexRagService, every method once; askContexts and corroborateContent need the `generativeModel` option (UNIMPLEMENTED without it, saying so). */
export const RAG_SERVICE_TABLE = {
  retrieveContexts: method({
    rpc: 'RetrieveContexts',
    run: (c: RagCall, r) => retrieveContexts(c.ctx, c.version, r),
    write: read,
    shape: UNARY,
    http: [{ verb: 'POST', path: `{parent=${L}}:retrieveContexts`, body: '*' }],
  }),
  augmentPrompt: method({
    rpc: 'AugmentPrompt',
    run: (c: RagCall, r) => augmentPrompt(c.ctx, c.version, r),
    write: read,
    shape: UNARY,
    http: [{ verb: 'POST', path: `{parent=${L}}:augmentPrompt`, body: '*' }],
  }),
  corroborateContent: method({
    rpc: 'CorroborateContent',
    run: (c: RagCall, r) => corroborateContent(c.ctx, c.version, r),
    write: read,
    shape: UNARY,
    http: [{ verb: 'POST', path: `{parent=${L}}:corroborateContent`, body: '*' }],
  }),
  askContexts: method({
    rpc: 'AskContexts',
    run: (c: RagCall, r) => askContexts(c.ctx, c.version, r),
    write: read,
    shape: UNARY,
    http: [{ verb: 'POST', path: `{parent=${L}}:askContexts`, body: '*' }],
  }),
  // A write: it stores its operation (journaled and replayed with --data).
  asyncRetrieveContexts: method({
    rpc: 'AsyncRetrieveContexts',
    run: (c: RagCall, r) => asyncRetrieveContexts(c.ctx, c.version, r),
    write,
    shape: longRunningShape<{ contexts?: { contexts?: ContextJson[] } }>(),
    http: [{ verb: 'POST', path: `{parent=${L}}:asyncRetrieveContexts`, body: '*' }],
  }),
} as const

/**
 * google.cloud.aiplatform.{v1,v1beta1}.VertexRagDataService, every method once; schemas and
 * metadata are v1beta1's. RagEngineConfig is each location's RagManagedDb tier (engine-config.ts).
 */
export const RAG_DATA_TABLE = {
  createRagCorpus: method({ rpc: 'CreateRagCorpus', run: (c: RagCall, r) => createRagCorpus(c.ctx, c.version, r), write, shape: longRunningShape<RagCorpusJson>(), http: [{ verb: 'POST', path: `{parent=${L}}/ragCorpora`, body: 'ragCorpus' }] }),
  updateRagCorpus: method({ rpc: 'UpdateRagCorpus', run: (c: RagCall, r) => updateRagCorpus(c.ctx, c.version, r), write, shape: longRunningShape<RagCorpusJson>(), http: [{ verb: 'PATCH', path: `{ragCorpus.name=${C}}`, body: 'ragCorpus' }] }),
  getRagCorpus: method({ rpc: 'GetRagCorpus', run: (c: RagCall, r) => getRagCorpus(c.ctx, c.version, r), write: read, shape: UNARY, http: [{ verb: 'GET', path: `{name=${C}}` }] }),
  listRagCorpora: method({ rpc: 'ListRagCorpora', run: (c: RagCall, r) => listRagCorpora(c.ctx, c.version, r), write: read, shape: pagedShape('ragCorpora'), http: [{ verb: 'GET', path: `{parent=${L}}/ragCorpora` }] }),
  deleteRagCorpus: method({ rpc: 'DeleteRagCorpus', run: (c: RagCall, r) => deleteRagCorpus(c.ctx, c.version, r), write, shape: longRunningShape<Empty>(), http: [{ verb: 'DELETE', path: `{name=${C}}` }] }),
  uploadRagFile: method({
    rpc: 'UploadRagFile',
    run: (c: RagCall, r, content) => uploadRagFile(c.ctx, c.version, r, content),
    ahead: (c: RagCall, r, content) => uploadAhead(c.ctx, c.version, r, content),
    write,
    shape: UNARY,
    content: true,
    // The JSON binding of the protos, and Google's media upload endpoint that carries the file.
    http: [
      { verb: 'POST', path: `{parent=${C}}/ragFiles:upload`, body: '*' },
      { verb: 'POST', path: `{parent=${C}}/ragFiles:upload`, body: '*', media: true },
    ],
  }),
  importRagFiles: method({ rpc: 'ImportRagFiles', run: (c: RagCall, r) => importRagFiles(c.ctx, c.version, r, c.importRoots), write, shape: longRunningShape<ImportRagFilesResponseJson>(), http: [{ verb: 'POST', path: `{parent=${C}}/ragFiles:import`, body: '*' }] }),
  getRagFile: method({ rpc: 'GetRagFile', run: (c: RagCall, r) => getRagFile(c.ctx, c.version, r), write: read, shape: UNARY, http: [{ verb: 'GET', path: `{name=${F}}` }] }),
  listRagFiles: method({ rpc: 'ListRagFiles', run: (c: RagCall, r) => listRagFiles(c.ctx, c.version, r), write: read, shape: pagedShape('ragFiles'), http: [{ verb: 'GET', path: `{parent=${C}}/ragFiles` }] }),
  deleteRagFile: method({ rpc: 'DeleteRagFile', run: (c: RagCall, r) => deleteRagFile(c.ctx, c.version, r), write, shape: longRunningShape<Empty>(), http: [{ verb: 'DELETE', path: `{name=${F}}` }] }),
  updateRagEngineConfig: method({ rpc: 'UpdateRagEngineConfig', run: (c: RagCall, r) => updateRagEngineConfig(c.ctx, c.version, r), write, shape: longRunningShape<RagEngineConfigJson>(), http: [{ verb: 'PATCH', path: `{ragEngineConfig.name=${L}/ragEngineConfig}`, body: 'ragEngineConfig' }] }),
  getRagEngineConfig: method({ rpc: 'GetRagEngineConfig', run: (c: RagCall, r) => getRagEngineConfig(c.ctx, c.version, r), write: read, shape: UNARY, http: [{ verb: 'GET', path: `{name=${L}/ragEngineConfig}` }] }),
  createRagDataSchema: method({ rpc: 'CreateRagDataSchema', run: (c: RagCall, r) => metadata.createRagDataSchema(c.ctx, r), write, shape: UNARY, versions: BETA, http: [{ verb: 'POST', path: `{parent=${C}}/ragDataSchemas`, body: 'ragDataSchema' }] }),
  batchCreateRagDataSchemas: method({ rpc: 'BatchCreateRagDataSchemas', run: (c: RagCall, r) => metadata.batchCreateRagDataSchemas(c.ctx, r), write, shape: longRunningShape<{ ragDataSchemas: RagDataSchemaJson[] }>(), versions: BETA, http: [{ verb: 'POST', path: `{parent=${C}}/ragDataSchemas:batchCreate`, body: '*' }] }),
  getRagDataSchema: method({ rpc: 'GetRagDataSchema', run: (c: RagCall, r) => metadata.getRagDataSchema(c.ctx, r), write: read, shape: UNARY, versions: BETA, http: [{ verb: 'GET', path: `{name=${S}}` }] }),
  listRagDataSchemas: method({ rpc: 'ListRagDataSchemas', run: (c: RagCall, r) => metadata.listRagDataSchemas(c.ctx, r), write: read, shape: pagedShape('ragDataSchemas'), versions: BETA, http: [{ verb: 'GET', path: `{parent=${C}}/ragDataSchemas` }] }),
  deleteRagDataSchema: method({ rpc: 'DeleteRagDataSchema', run: (c: RagCall, r) => metadata.deleteRagDataSchema(c.ctx, r), write, shape: UNARY, versions: BETA, http: [{ verb: 'DELETE', path: `{name=${S}}` }] }),
  batchDeleteRagDataSchemas: method({ rpc: 'BatchDeleteRagDataSchemas', run: (c: RagCall, r) => metadata.batchDeleteRagDataSchemas(c.ctx, r), write, shape: longRunningShape<Empty>(), versions: BETA, http: [{ verb: 'POST', path: `{parent=${C}}/ragDataSchemas:batchDelete`, body: '*' }] }),
  createRagMetadata: method({ rpc: 'CreateRagMetadata', run: (c: RagCall, r) => metadata.createRagMetadata(c.ctx, r), write, shape: UNARY, versions: BETA, http: [{ verb: 'POST', path: `{parent=${F}}/ragMetadata`, body: 'ragMetadata' }] }),
  batchCreateRagMetadata: method({ rpc: 'BatchCreateRagMetadata', run: (c: RagCall, r) => metadata.batchCreateRagMetadata(c.ctx, r), write, shape: longRunningShape<{ ragMetadata: RagMetadataJson[] }>(), versions: BETA, http: [{ verb: 'POST', path: `{parent=${F}}/ragMetadata:batchCreate`, body: '*' }] }),
  updateRagMetadata: method({ rpc: 'UpdateRagMetadata', run: (c: RagCall, r) => metadata.updateRagMetadata(c.ctx, r), write, shape: UNARY, versions: BETA, http: [{ verb: 'PATCH', path: `{ragMetadata.name=${M}}`, body: 'ragMetadata' }] }),
  getRagMetadata: method({ rpc: 'GetRagMetadata', run: (c: RagCall, r) => metadata.getRagMetadata(c.ctx, r), write: read, shape: UNARY, versions: BETA, http: [{ verb: 'GET', path: `{name=${M}}` }] }),
  listRagMetadata: method({ rpc: 'ListRagMetadata', run: (c: RagCall, r) => metadata.listRagMetadata(c.ctx, r), write: read, shape: pagedShape('ragMetadata'), versions: BETA, http: [{ verb: 'GET', path: `{parent=${F}}/ragMetadata` }] }),
  deleteRagMetadata: method({ rpc: 'DeleteRagMetadata', run: (c: RagCall, r) => metadata.deleteRagMetadata(c.ctx, r), write, shape: UNARY, versions: BETA, http: [{ verb: 'DELETE', path: `{name=${M}}` }] }),
  batchDeleteRagMetadata: method({ rpc: 'BatchDeleteRagMetadata', run: (c: RagCall, r) => metadata.batchDeleteRagMetadata(c.ctx, r), write, shape: longRunningShape<Empty>(), versions: BETA, http: [{ verb: 'POST', path: `{parent=${F}}/ragMetadata:batchDelete`, body: '*' }] }),
} as const

/**
 * What both RAG clients carry besides their service's RPCs: google.longrunning.Operations over the
 * engine's operations (served), Locations and IAMPolicy (UNIMPLEMENTED). Over HTTP these are bound
 * once per version for every engine (rpc/mixins.ts).
 */
export const RAG_MIXIN_TABLE = { ...operationsMixin((c: RagCall) => c.ctx.state.operations), ...locationAndIamMixin() } as const
