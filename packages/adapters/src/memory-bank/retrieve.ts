import type { Filter, Hit } from '@quarry/core'
import { omitUndefined, omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { MemoryContext } from './context.js'
import { readScope } from './fields.js'
import { memoryFilter } from './memories.js'
import { RetrieveMemoriesRequest, type ConjunctionInput } from './schema.js'
import { memoryJson, metadataField, SCOPE_FIELD, scopeKeyOf, type MemoryJson, type MemoryState } from './state.js'

/** Memories when topK / pageSize is unset, and the most a request gets (larger values are coerced). */
export const DEFAULT_RETRIEVE = 3
export const MAX_RETRIEVE = 100

export interface RetrievedMemoryJson {
  readonly memory: MemoryJson
  /**
   * Similarity search only: the Euclidean distance of the query's and the fact's embeddings, each
   * scaled to length 1 (`unitDistance`): √(2 − 2·cos) ∈ [0, 2], smaller is more similar. A double
   * without presence: omitted when exactly 0 (read a missing distance as 0).
   */
  readonly distance?: number
}

export interface RetrieveMemoriesResponseJson {
  readonly retrievedMemories?: readonly RetrievedMemoryJson[]
  readonly nextPageToken?: string
}

/** topK / pageSize: unset (0 reads as unset: no presence) is the default, above the maximum is coerced. */
function count(value: number | undefined, field: string): number {
  if (value === undefined) return DEFAULT_RETRIEVE
  if (value < 0) throw invalidArgument(field, `${field.split('.').pop()} cannot be negative; received ${value} (0 or unset means ${DEFAULT_RETRIEVE}, at most ${MAX_RETRIEVE}).`)
  return Math.min(value, MAX_RETRIEVE)
}

/**
 * The distance a RetrievedMemory reports: Euclidean, as Google's Memory Bank guide says of
 * similarity search ("sorted from the most similar (shortest Euclidean distance) to the least
 * similar (longest Euclidean distance)"), between the two embeddings scaled to unit length —
 * Google's embedding models return unit vectors, where this is the plain Euclidean distance; for
 * any embedder it is √(2 − 2·cos), so its order is the cosine order the index ranks by. Computed
 * in float64 from the stored vectors: identical texts are exactly 0 apart.
 */
export function unitDistance(q: Float32Array, v: Float32Array): number {
  let qq = 0
  let vv = 0
  for (let i = 0; i < q.length; i++) {
    qq += (q[i] ?? 0) * (q[i] ?? 0)
    vv += (v[i] ?? 0) * (v[i] ?? 0)
  }
  const qn = Math.sqrt(qq)
  const vn = Math.sqrt(vv)
  let sum = 0
  for (let i = 0; i < q.length; i++) {
    const d = (q[i] ?? 0) / qn - (v[i] ?? 0) / vn
    sum += d * d
  }
  return Math.sqrt(sum)
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

/** What a retrieval keeps: the memories of the scope `scopeKey` names that `filter` (AIP-160) and `filterGroups` keep. */
export function retrievalFilter(scopeKey: string, filter: string | undefined, filterGroups: readonly ConjunctionInput[]): Filter {
  const parts: Filter[] = [{ op: 'eq', field: SCOPE_FIELD, value: scopeKey }]
  const text = memoryFilter(filter, 'filter')
  if (text) parts.push(text)
  const groups = groupsFilter(filterGroups)
  if (groups) parts.push(groups)
  return parts.length === 1 ? (parts[0] as Filter) : { op: 'and', filters: parts }
}

/**
 * Retrieves memories of exactly one scope: by similarity to a query (topK, distance ascending) or
 * page by page in creation order (the page token is a cursor: memories added meanwhile come later,
 * none is skipped or repeated). `filter` and `filterGroups` narrow both; expired memories are
 * swept out first. The scope is a filter on every path, so no other scope's memory can appear.
 * Both paths have the value indexes answer the filter, scope included: a filter of many groups
 * costs its parts and the memories they match, not its parts times the scope's memories.
 */
export async function retrieveMemories(ctx: MemoryContext, request: unknown): Promise<RetrieveMemoriesResponseJson> {
  const req = readMessage(RetrieveMemoriesRequest, request)
  const engine = ctx.readEngine(req.parent, 'parent')
  const scope = readScope(req.scope, 'scope')
  const scopeKey = scopeKeyOf(scope)
  const filter = retrievalFilter(scopeKey, req.filter, req.filterGroups ?? [])
  if (req.similaritySearchParams) {
    if ((req.similaritySearchParams.searchQuery ?? '').trim() === '') throw invalidArgument('similaritySearchParams.searchQuery', 'searchQuery is required for similarity search.')
    count(req.similaritySearchParams.topK, 'similaritySearchParams.topK')
  } else count(req.simpleRetrievalParams?.pageSize, 'simpleRetrievalParams.pageSize')
  // The list a simple retrieval's page tokens name.
  const list = `retrieveMemories ${engine?.name ?? req.parent} ${scopeKey} ${req.filter ?? ''} ${JSON.stringify(req.filterGroups ?? [])}`
  const simplePage = <T extends { readonly seq: number }>(items: readonly T[], simple: NonNullable<typeof req.simpleRetrievalParams>) =>
    pageOf(items, (m) => m.seq, list, omitUndefined({ pageSize: count(simple.pageSize, 'simpleRetrievalParams.pageSize'), pageToken: simple.pageToken }), { defaultSize: DEFAULT_RETRIEVE, maxSize: MAX_RETRIEVE })
  if (!engine) {
    // An engine that holds nothing yet retrieves nothing; a page token given it is still read.
    if (!req.similaritySearchParams && req.simpleRetrievalParams) simplePage([], req.simpleRetrievalParams)
    return {}
  }

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
      const stored = engine.index.get(h.id)?.vector
      return m && stored && ctx.visible(m) ? [omitUnset({ memory: memoryJson(m), distance: unitDistance(vector, stored) })] : []
    })
    return omitUnset({ retrievedMemories: retrieved })
  }
  const all: MemoryState[] = []
  for (const id of engine.index.ids(filter)) {
    const m = engine.memories.get(id)
    if (m !== undefined && ctx.visible(m)) all.push(m)
  }
  // The index lists them by label (reused after deletes): pages go in creation order.
  all.sort((a, b) => a.seq - b.seq)
  const page = simplePage(all, req.simpleRetrievalParams ?? {})
  return omitUnset({ retrievedMemories: page.items.map((m) => ({ memory: memoryJson(m) })), nextPageToken: page.nextPageToken })
}
