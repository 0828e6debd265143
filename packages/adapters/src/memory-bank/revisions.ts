import { parseFilter, type FilterExpr } from '../rpc/aip160.js'
import type { Operation } from '../rpc/operations.js'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { MAX_TIMESTAMP_MS, readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { parseRevision, type MemoryContext } from './context.js'
import { GetMemoryRevisionRequest, ListMemoryRevisionsRequest, RollbackMemoryRequest } from './schema.js'
import { indexMemory, revisionJson, type MemoryRevisionJson, type MemoryState, type RevisionState } from './state.js'

/**
 * Memory revisions: every write that creates or changes a memory (createMemory, updateMemory,
 * generateMemories, rollbackMemory) appends an immutable snapshot of its fact, unless the request
 * sets `disableMemoryRevisions`. A revision lives until its expireTime (the request's
 * `revisionExpireTime` / `revisionTtl`, else 365 days) or until its memory is deleted, purged or
 * expires: revisions are kept with the memory they belong to.
 */

/**
 * Seconds a revision is kept when the request says nothing: Google's default revision TTL, "If
 * not set, a default TTL of 365 days will be used" (ReasoningEngineContextSpec.MemoryBankConfig.
 * TtlConfig.memoryRevisionDefaultTtl of the ReasoningEngine resource; the description as Google's
 * discovery document gives it: https://pub.dev/documentation/googleapis/latest/aiplatform_v1/GoogleCloudAiplatformV1ReasoningEngineContextSpecMemoryBankConfigTtlConfig/memoryRevisionDefaultTtl.html).
 */
export const DEFAULT_REVISION_TTL_SECONDS = 365 * 24 * 3600

/** What a write says about the revision it makes: its labels, how long it is kept, or none at all. */
interface RevisionPlan {
  readonly disabled: boolean
  readonly labels: Readonly<Record<string, string>>
  /** The revision's expiry from its creation instant. */
  readonly expireAt: (createMs: number) => number
}

/** The revision fields of a Memory or a GenerateMemoriesRequest (input only). */
interface RevisionFields {
  readonly revisionLabels?: Readonly<Record<string, string>> | undefined
  readonly revisionExpireTime?: string | undefined
  readonly revisionTtl?: number | undefined
  readonly disableMemoryRevisions?: boolean | undefined
}

/**
 * Checks a request's revision fields before anything is written. `now` is read only when an
 * expireTime has to be checked against it (a write reads the clock as few times as it must).
 */
export function readRevisionPlan(fields: RevisionFields, now: () => number, prefix: string): RevisionPlan {
  const at = (name: string): string => (prefix === '' ? name : `${prefix}.${name}`)
  const labels: Record<string, string> = {}
  for (const [k, v] of Object.entries(fields.revisionLabels ?? {})) {
    if (k === '') throw invalidArgument(at('revisionLabels'), 'a revision label key cannot be empty.')
    Object.defineProperty(labels, k, { value: v, enumerable: true, writable: true, configurable: true })
  }
  const disabled = fields.disableMemoryRevisions === true
  let expireAt = (createMs: number): number => Math.min(MAX_TIMESTAMP_MS, createMs + DEFAULT_REVISION_TTL_SECONDS * 1000)
  if (fields.revisionTtl !== undefined) {
    const ttl = fields.revisionTtl
    if (ttl <= 0) throw invalidArgument(at('revisionTtl'), `revisionTtl must be positive, like "86400s"; received ${ttl}s.`)
    if (ttl * 1000 > MAX_TIMESTAMP_MS) throw invalidArgument(at('revisionTtl'), `revisionTtl ${ttl}s ends after the year 9999; give a shorter one.`)
    expireAt = (createMs) => Math.min(MAX_TIMESTAMP_MS, createMs + Math.ceil(ttl * 1000))
  } else if (fields.revisionExpireTime !== undefined) {
    const ms = Date.parse(fields.revisionExpireTime)
    if (ms <= now()) throw invalidArgument(at('revisionExpireTime'), `revisionExpireTime ${fields.revisionExpireTime} is not in the future.`)
    expireAt = () => ms
  }
  return { disabled, labels: Object.freeze(labels), expireAt }
}

/** The memory's revisions not yet expired at `now`, oldest first. */
function liveRevisions(m: MemoryState, now: number): RevisionState[] {
  return (m.revisions ?? []).filter((r) => r.expireMs > now)
}

/**
 * Appends the revision of the memory as a write left it (at `m.updateMs`), dropping those expired
 * by then; returns it, or undefined when the write disabled revisions.
 */
export function recordRevision(m: MemoryState, plan: RevisionPlan, extracted?: readonly string[]): RevisionState | undefined {
  if (plan.disabled) return undefined
  const createMs = m.updateMs
  const id = (m.lastRevision ?? 0) + 1
  const revision: RevisionState = Object.freeze({ id: String(id), createMs, expireMs: plan.expireAt(createMs), fact: m.fact, labels: plan.labels, ...(extracted === undefined ? {} : { extracted: Object.freeze([...extracted]) }) })
  m.revisions = [...liveRevisions(m, createMs), revision]
  m.lastRevision = id
  return revision
}

/** The name of the memory's newest revision still kept at `now` (what a write's previousRevision names). */
export function latestRevisionName(m: MemoryState, now: number): string | undefined {
  const live = liveRevisions(m, now)
  const last = live[live.length - 1]
  return last === undefined ? undefined : `${m.name}/revisions/${last.id}`
}

/**
 * A revisions.list filter: `labels.<key> = "<value>"` comparisons (equality only, as the REST
 * reference says) joined with AND, OR, NOT and parentheses.
 */
function labelsFilter(filter: string | undefined, field: string): ((labels: Readonly<Record<string, string>>) => boolean) | undefined {
  if (filter === undefined || filter.trim() === '') return undefined
  const compile = (e: FilterExpr): ((labels: Readonly<Record<string, string>>) => boolean) => {
    switch (e.k) {
      case 'and': {
        const parts = e.items.map(compile)
        return (l) => parts.every((p) => p(l))
      }
      case 'or': {
        const parts = e.items.map(compile)
        return (l) => parts.some((p) => p(l))
      }
      case 'not': {
        const inner = compile(e.expr)
        return (l) => !inner(l)
      }
      case 'has':
      case 'cmp': {
        const key = e.field.startsWith('labels.') ? e.field.slice('labels.'.length) : ''
        if (key === '') throw invalidArgument(field, `a revisions filter compares labels.<key> = "value"; "${e.field}" is not a label.`)
        if (e.k === 'has' || e.op !== '=') throw invalidArgument(field, `a revisions filter matches labels by equality only (labels.${key} = "value").`)
        const value = String(e.value.v)
        return (l) => Object.hasOwn(l, key) && l[key] === value
      }
    }
  }
  return compile(parseFilter(filter, field))
}

/** revisions.list: a memory's revisions, newest first, optionally those whose labels match `filter`. */
export async function listMemoryRevisions(ctx: MemoryContext, request: unknown): Promise<{ memoryRevisions?: MemoryRevisionJson[]; nextPageToken?: string }> {
  const req = readMessage(ListMemoryRevisionsRequest, request)
  const test = labelsFilter(req.filter, 'filter')
  const { memory } = ctx.memory(req.parent, 'parent')
  const now = ctx.now()
  const all = liveRevisions(memory, now)
    .reverse()
    .filter((r) => !test || test(r.labels))
  const page = pageOf(all, (r) => -Number(r.id), `listMemoryRevisions ${memory.name} ${req.filter ?? ''}`, req, { defaultSize: 100, maxSize: 1000 })
  return omitUnset({ memoryRevisions: page.items.map((r) => revisionJson(memory, r)), nextPageToken: page.nextPageToken })
}

/** Finds a revision of a memory still kept at `now` (NOT_FOUND otherwise). */
function revisionOf(memory: MemoryState, id: string, now: number, name: string, field: string): RevisionState {
  const found = liveRevisions(memory, now).find((r) => r.id === id)
  if (!found) throw failure('NOT_FOUND', `Memory revision "${name}" not found (it may have expired).`, field)
  return found
}

/** revisions.get. */
export async function getMemoryRevision(ctx: MemoryContext, request: unknown): Promise<MemoryRevisionJson> {
  const { name } = readMessage(GetMemoryRevisionRequest, request)
  const parsed = parseRevision(name, 'name')
  const { memory } = ctx.memory(parsed.parent, 'name')
  return revisionJson(memory, revisionOf(memory, parsed.id, ctx.now(), parsed.name, 'name'))
}

/**
 * memories.rollback: the memory takes the fact of `targetRevisionId` again (re-embedded), and the
 * rollback is itself recorded as a new revision, so the history stays whole.
 */
export async function rollbackMemory(ctx: MemoryContext, request: unknown, version: string): Promise<Operation> {
  const req = readMessage(RollbackMemoryRequest, request)
  if (req.targetRevisionId === undefined) throw invalidArgument('targetRevisionId', 'targetRevisionId is required: the id of the revision to roll back to (the last part of its name).')
  // Revision ids are 1, 2, 3…: one that is no positive integer is malformed, not a revision that could be missing.
  if (req.targetRevisionId < 1) throw invalidArgument('targetRevisionId', `targetRevisionId is a revision's id, a positive integer (the last part of its name); received ${req.targetRevisionId}.`)
  const { engine, memory } = ctx.memory(req.name, 'name')
  const now = ctx.now()
  const id = String(req.targetRevisionId)
  const target = revisionOf(memory, id, now, `${memory.name}/revisions/${id}`, 'targetRevisionId')
  const [vector] = target.fact === memory.fact ? [engine.index.get(memory.name)?.vector] : await ctx.embed([target.fact])
  if (!engine.memories.has(memory.name)) throw failure('NOT_FOUND', `Memory "${memory.name}" was deleted meanwhile.`, 'name')
  memory.fact = target.fact
  memory.updateMs = now
  indexMemory(engine, memory, vector as Float32Array)
  recordRevision(memory, readRevisionPlan({}, () => now, ''))
  return ctx.operation(memory.name, 'RollbackMemoryOperationMetadata', 'google.protobuf.Empty', {}, version)
}
