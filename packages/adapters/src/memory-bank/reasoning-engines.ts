import { compileFilter, type Metadata } from '@quarry/core'
import { parseFilter } from '../rpc/aip160.js'
import { toCoreFilter, type KeyType } from '../rpc/aip160-filter.js'
import { rfc3339 } from '../rpc/clock.js'
import { parseName } from '../rpc/names.js'
import { omitUnset } from '../rpc/omit.js'
import type { Operation } from '../rpc/operations.js'
import { pageOf } from '../rpc/paging.js'
import { checkUpdateMask, mergeMaskPath, type MaskRules } from '../rpc/field-mask.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import type { MemoryContext } from './context.js'
import { checkContextSpec } from './engine-config.js'
import {
  CreateReasoningEngineRequest,
  ReasoningEngine,
  DeleteReasoningEngineRequest,
  GetReasoningEngineRequest,
  ListReasoningEnginesRequest,
  UpdateReasoningEngineRequest,
  type ContextSpecInput,
  type ReasoningEngineInput,
} from './engine-schema.js'
import { live } from './sessions.js'
import type { EngineState, ReasoningEngineState } from './state.js'

/**
 * ReasoningEngineService: Agent Engine resources over Memory Bank's engines. An engine created
 * here holds its memories and sessions like any other; one that came into being by a first write
 * under `reasoningEngines/N` (an implicit engine, as before this service) keeps working but is no
 * resource: get and delete answer NOT_FOUND and list leaves it out. Operations are done when returned.
 */

/** A ReasoningEngine as proto3 JSON. */
export interface ReasoningEngineJson {
  readonly name: string
  readonly displayName?: string
  readonly description?: string
  readonly spec?: Readonly<Record<string, unknown>>
  readonly createTime: string
  readonly updateTime: string
  readonly contextSpec?: Readonly<Record<string, unknown>>
  readonly encryptionSpec?: Readonly<Record<string, unknown>>
  readonly labels?: Readonly<Record<string, string>>
  readonly trafficConfig?: Readonly<Record<string, unknown>>
}

const LOCATION = 'projects/{project}/locations/{location}'

/** A Duration's proto3 JSON: seconds with an `s`. */
const durationJson = (seconds: number | undefined): string | undefined => (seconds === undefined ? undefined : `${seconds}s`)

/** contextSpec as proto3 JSON (the stored durations are seconds). */
function contextSpecJson(spec: ContextSpecInput): Readonly<Record<string, unknown>> {
  const mb = spec.memoryBankConfig
  if (mb === undefined) return {}
  const ttl = mb.ttlConfig
  const granular = ttl?.granularTtlConfig
  return {
    memoryBankConfig: omitUnset({
      generationConfig: mb.generationConfig,
      similaritySearchConfig: mb.similaritySearchConfig,
      ttlConfig:
        ttl === undefined
          ? undefined
          : omitUnset(
              {
                defaultTtl: durationJson(ttl.defaultTtl),
                granularTtlConfig: granular && omitUnset({ createTtl: durationJson(granular.createTtl), generateCreatedTtl: durationJson(granular.generateCreatedTtl), generateUpdatedTtl: durationJson(granular.generateUpdatedTtl) }),
                memoryRevisionDefaultTtl: durationJson(ttl.memoryRevisionDefaultTtl),
              },
              ['granularTtlConfig'],
            ),
      customizationConfigs: mb.customizationConfigs,
      disableMemoryRevisions: mb.disableMemoryRevisions,
    }),
  }
}

function reasoningEngineJson(name: string, r: ReasoningEngineState): ReasoningEngineJson {
  return omitUnset({
    name,
    displayName: r.displayName,
    description: r.description,
    spec: r.spec,
    createTime: rfc3339(r.createMs),
    updateTime: rfc3339(r.updateMs),
    contextSpec: r.contextSpec === undefined ? undefined : contextSpecJson(r.contextSpec),
    encryptionSpec: r.encryptionSpec,
    labels: r.labels,
    trafficConfig: r.trafficConfig,
  })
}

/** The fields a create or update sets, from the request's ReasoningEngine. */
function fieldsOf(e: ReasoningEngineInput): Partial<ReasoningEngineState> {
  return omitUnset({
    displayName: e.displayName,
    description: e.description,
    spec: e.spec,
    contextSpec: e.contextSpec,
    encryptionSpec: e.encryptionSpec,
    labels: e.labels,
    trafficConfig: e.trafficConfig,
  })
}

/** An engine that is a resource (created through this service), or NOT_FOUND. */
function resourceEngine(ctx: MemoryContext, name: string | undefined, field: string): EngineState & { resource: ReasoningEngineState } {
  const { name: parsed, engine } = ctx.findEngine(name, field)
  if (engine?.resource === undefined) throw failure('NOT_FOUND', `ReasoningEngine "${parsed}" not found.`, field)
  return engine as EngineState & { resource: ReasoningEngineState }
}

/**
 * createReasoningEngine: a new engine `<parent>/reasoningEngines/<numeric id>` (or
 * `reasoningEngines/<id>` through the binding without a parent) holding the resource as given.
 */
export async function createReasoningEngine(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const { parent, reasoningEngine = {} } = readMessage(CreateReasoningEngineRequest, request)
  const prefix = parent === undefined || parent === '' ? '' : `${parseName(parent, LOCATION, 'parent').name}/`
  let name: string
  do name = `${prefix}reasoningEngines/${ctx.numericId()}`
  while (ctx.state.engines.has(name))
  const now = ctx.now()
  checkContextSpec(reasoningEngine.contextSpec, now, 'reasoningEngine.contextSpec')
  const engine = ctx.createEngine(name)
  const { seq, createMs, updateMs } = ctx.stamp(now)
  engine.resource = { seq, createMs, updateMs, ...fieldsOf(reasoningEngine) }
  return ctx.operation(name, 'CreateReasoningEngineOperationMetadata', 'ReasoningEngine', reasoningEngineJson(name, engine.resource), version)
}

export async function getReasoningEngine(ctx: MemoryContext, request: unknown): Promise<ReasoningEngineJson> {
  const { name } = readMessage(GetReasoningEngineRequest, request)
  const engine = resourceEngine(ctx, name, 'name')
  return reasoningEngineJson(engine.name, engine.resource)
}

/** What a list filter reads (AIP-160): the engine's display name, description, times and labels. */
const FILTER_FIELDS: Readonly<Record<string, { readonly field: string; readonly type: KeyType }>> = {
  display_name: { field: 'display_name', type: 'string' },
  displayName: { field: 'display_name', type: 'string' },
  description: { field: 'description', type: 'string' },
  create_time: { field: 'create_time', type: 'datetime' },
  createTime: { field: 'create_time', type: 'datetime' },
  update_time: { field: 'update_time', type: 'datetime' },
  updateTime: { field: 'update_time', type: 'datetime' },
}

function engineMetadata(r: ReasoningEngineState): Metadata {
  const out: Metadata = { display_name: r.displayName ?? '', description: r.description ?? '', create_time: new Date(r.createMs), update_time: new Date(r.updateMs) }
  for (const [k, v] of Object.entries(r.labels ?? {})) out[`labels.${k}`] = v
  return out
}

function engineFilter(filter: string | undefined): ((r: ReasoningEngineState) => boolean) | undefined {
  if (filter === undefined || filter.trim() === '') return undefined
  const known = (key: string): { readonly field: string; readonly type: KeyType } | undefined =>
    Object.hasOwn(FILTER_FIELDS, key) ? FILTER_FIELDS[key] : key.startsWith('labels.') && key.length > 7 ? { field: key, type: 'string' } : undefined
  const fieldOf = (key: string): string => {
    const f = known(key)
    if (f === undefined) throw invalidArgument('filter', `a reasoning engine filter reads display_name, description, create_time, update_time or labels.<key>; "${key}" is none of them.`)
    return f.field
  }
  const test = compileFilter(toCoreFilter(parseFilter(filter, 'filter'), { path: 'filter', fieldOf, typeOf: (k) => known(k)?.type, hasOnListsOnly: true }))
  return (r) => test(engineMetadata(r))
}

/** The location's engines that are resources, in creation order (implicit engines are not listed). */
export async function listReasoningEngines(ctx: MemoryContext, request: unknown): Promise<{ reasoningEngines?: ReasoningEngineJson[]; nextPageToken?: string }> {
  const req = readMessage(ListReasoningEnginesRequest, request)
  const prefix = req.parent === undefined || req.parent === '' ? '' : `${parseName(req.parent, LOCATION, 'parent').name}/`
  const test = engineFilter(req.filter)
  const all = [...ctx.state.engines.values()].filter(
    (e): e is EngineState & { resource: ReasoningEngineState } => e.resource !== undefined && e.name.startsWith(`${prefix}reasoningEngines/`) && (!test || test(e.resource)),
  )
  all.sort((a, b) => a.resource.seq - b.resource.seq)
  const page = pageOf(all, (e) => e.resource.seq, `listReasoningEngines ${prefix} ${req.filter ?? ''}`, req, { defaultSize: 50, maxSize: 1000 })
  return omitUnset({ reasoningEngines: page.items.map((e) => reasoningEngineJson(e.name, e.resource)), nextPageToken: page.nextPageToken })
}

/** Fields an update may set; a mask path may also name a field inside one (`contextSpec.memoryBankConfig.ttlConfig`, `labels.team`). */
const MASK: MaskRules = { updatable: ['displayName', 'description', 'spec', 'contextSpec', 'encryptionSpec', 'labels', 'trafficConfig'], subPaths: true }

/**
 * updateReasoningEngine: the fields of `updateMask` (every field given, without one) replaced,
 * path by path (rpc/field-mask.ts: every path names a field of the ReasoningEngine). The result
 * is checked as a create's request is, oneofs and TTLs included, before it replaces the engine.
 */
export async function updateReasoningEngine(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const { reasoningEngine = {}, updateMask } = readMessage(UpdateReasoningEngineRequest, request)
  const engine = resourceEngine(ctx, reasoningEngine.name, 'reasoningEngine.name')
  const given = fieldsOf(reasoningEngine) as Record<string, unknown>
  const paths = updateMask && updateMask.length > 0 ? updateMask : MASK.updatable.filter((p) => given[p] !== undefined)
  let next: Record<string, unknown> = { ...engine.resource }
  for (const [i, path] of checkUpdateMask(ReasoningEngine, paths, MASK).entries()) next = mergeMaskPath(next, given, path, ReasoningEngine, `updateMask.paths[${i}]`)
  const merged = next as unknown as ReasoningEngineState
  readMessage(ReasoningEngine, reasoningEngineJson(engine.name, merged), 'reasoningEngine')
  const now = ctx.now()
  checkContextSpec(merged.contextSpec, now, 'reasoningEngine.contextSpec')
  engine.resource = { ...merged, updateMs: now }
  return ctx.operation(engine.name, 'UpdateReasoningEngineOperationMetadata', 'ReasoningEngine', reasoningEngineJson(engine.name, engine.resource), version)
}

/**
 * deleteReasoningEngine: the engine with its memories (and their revisions) and sessions. An
 * engine holding any is FAILED_PRECONDITION unless `force` (DeleteReasoningEngineRequest.force).
 */
export async function deleteReasoningEngine(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const { name, force } = readMessage(DeleteReasoningEngineRequest, request)
  const engine = resourceEngine(ctx, name, 'name')
  if (!force) {
    const memories = [...engine.memories.values()].filter((m) => ctx.visible(m)).length
    // An expired session is gone (NOT_FOUND, never listed) before a sweep removes it: it holds nothing back, and goes with the engine.
    // The clock is read only where there are sessions to count.
    const now = engine.sessions.size === 0 ? 0 : ctx.now()
    const sessions = [...engine.sessions.values()].filter((s) => live(s, now)).length
    if (memories + sessions > 0) {
      const held = `${memories} ${memories === 1 ? 'memory' : 'memories'} and ${sessions} ${sessions === 1 ? 'session' : 'sessions'}`
      throw failure('FAILED_PRECONDITION', `ReasoningEngine "${engine.name}" holds ${held}; delete them first, or pass force=true to delete them with it.`)
    }
  }
  ctx.state.engines.delete(engine.name)
  return ctx.operation(engine.name, 'DeleteOperationMetadata', 'google.protobuf.Empty', {}, version)
}
