import type { Filter, Hit } from '@quarry/core'
import { compileFilter } from '@quarry/core'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { MemoryContext } from './context.js'
import { readScope } from './fields.js'
import { memoryFilter } from './memories.js'
import { RetrieveMemoriesRequest, type ConjunctionInput } from './schema.js'
import { memoryJson, memoryMetadata, metadataField, SCOPE_FIELD, scopeKeyOf, type MemoryJson } from './state.js'

/** Memories when topK / pageSize is unset, and the most a request gets (larger values are coerced). */
export const DEFAULT_RETRIEVE = 3
export const MAX_RETRIEVE = 100

export interface RetrievedMemoryJson {
  readonly memory: MemoryJson
  /** Cosine distance (1 − cos) of the query and the fact; similarity search only. */
  readonly distance?: number
}

export interface RetrieveMemoriesResponseJson {
  readonly retrievedMemories?: readonly RetrievedMemoryJson[]
  readonly nextPageToken?: string
}

function count(value: number | undefined, field: string): number {
  const n = value ?? 0
  if (n < 0) throw invalidArgument(field, `${field.split('.').pop()} cannot be negative; received ${n} (0 or unset means ${DEFAULT_RETRIEVE}, at most ${MAX_RETRIEVE}).`)
  return n === 0 ? DEFAULT_RETRIEVE : Math.min(n, MAX_RETRIEVE)
}

/** filterGroups: an OR of groups, each an AND of metadata comparisons (EQUAL, GREATER_THAN, LESS_THAN), each optionally negated. */
function groupsFilter(groups: readonly ConjunctionInput[]): Filter | undefined {
  if (groups.length === 0) return undefined
  return {
    op: 'or',
    filters: groups.map((g, i): Filter => {
      const filters = (g.filters ?? []).map((f, j): Filter => {
        const at = `filterGroups[${i}].filters[${j}]`
        if (!f.key) throw invalidArgument(`${at}.key`, 'key is required: a metadata key.')
        if (!f.op || f.op === 'OPERATOR_UNSPECIFIED') throw invalidArgument(`${at}.op`, 'op is required: EQUAL, GREATER_THAN or LESS_THAN.')
        const v = f.value ?? {}
        const value = v.stringValue ?? v.doubleValue ?? v.boolValue ?? (v.timestampValue !== undefined ? { datetime: v.timestampValue } : undefined)
        if (value === undefined) throw invalidArgument(`${at}.value`, 'value is required: one of stringValue, doubleValue, boolValue, timestampValue.')
        const op = f.op === 'EQUAL' ? 'eq' : f.op === 'GREATER_THAN' ? 'gt' : 'lt'
        const comparison: Filter = { op, field: metadataField(f.key), value }
        return f.negate ? { op: 'not', filter: comparison } : comparison
      })
      if (filters.length === 0) throw invalidArgument(`filterGroups[${i}].filters`, 'a filter group needs at least one filter.')
      return filters.length === 1 ? (filters[0] as Filter) : { op: 'and', filters }
    }),
  }
}

/**
 * Retrieves memories of exactly one scope: by similarity to a query (topK, distance ascending) or
 * page by page in creation order (the page token is a cursor: memories added meanwhile come later,
 * none is skipped or repeated). `filter` and `filterGroups` narrow both; expired memories are
 * swept out first. The scope is a filter on every path, so no other scope's memory can appear.
 */
export async function retrieveMemories(ctx: MemoryContext, request: unknown): Promise<RetrieveMemoriesResponseJson> {
  const req = readMessage(RetrieveMemoriesRequest, request)
  const engine = ctx.readEngine(req.parent, 'parent')
  const scope = readScope(req.scope, 'scope')
  const scopeKey = scopeKeyOf(scope)
  const parts: Filter[] = [{ op: 'eq', field: SCOPE_FIELD, value: scopeKey }]
  const text = memoryFilter(req.filter, 'filter')
  if (text) parts.push(text)
  const groups = groupsFilter(req.filterGroups ?? [])
  if (groups) parts.push(groups)
  const filter: Filter = parts.length === 1 ? (parts[0] as Filter) : { op: 'and', filters: parts }
  if (req.similaritySearchParams) {
    if ((req.similaritySearchParams.searchQuery ?? '').trim() === '') throw invalidArgument('similaritySearchParams.searchQuery', 'searchQuery is required for similarity search.')
    count(req.similaritySearchParams.topK, 'similaritySearchParams.topK')
  } else count(req.simpleRetrievalParams?.pageSize, 'simpleRetrievalParams.pageSize')
  if (!engine) return {}

  const similarity = req.similaritySearchParams
  if (similarity) {
    const query = similarity.searchQuery ?? ''
    if (query.trim() === '') throw invalidArgument('similaritySearchParams.searchQuery', 'searchQuery is required for similarity search.')
    const topK = count(similarity.topK, 'similaritySearchParams.topK')
    const [vector] = await ctx.embed([query])
    ctx.sweep(engine)
    if (engine.index.size === 0 || vector === undefined || !vector.some((x) => x !== 0)) return {}
    const hits: readonly Hit[] = engine.index.search({ vector, topK, filter }).hits
    const retrieved = hits.flatMap((h) => {
      const m = engine.memories.get(h.id)
      return m ? [{ memory: memoryJson(m), distance: h.distance as number }] : []
    })
    return retrieved.length > 0 ? { retrievedMemories: retrieved } : {}
  }
  const simple = req.simpleRetrievalParams ?? {}
  const pageSize = count(simple.pageSize, 'simpleRetrievalParams.pageSize')
  const test = compileFilter(filter)
  const all = [...engine.memories.values()].filter((m) => test(memoryMetadata(m)))
  const page = pageOf(all, (m) => m.seq, `retrieveMemories ${engine.name} ${scopeKey} ${req.filter ?? ''} ${JSON.stringify(req.filterGroups ?? [])}`, { pageSize, ...(simple.pageToken ? { pageToken: simple.pageToken } : {}) }, { defaultSize: DEFAULT_RETRIEVE, maxSize: MAX_RETRIEVE })
  return {
    ...(page.items.length > 0 ? { retrievedMemories: page.items.map((m) => ({ memory: memoryJson(m) })) } : {}),
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
  }
}
