import type { MemoryBank } from '../memory-bank/service.js'
import { live } from '../memory-bank/sessions.js'
import { scopeCount, type EngineState, type MemoryState } from '../memory-bank/state.js'
import { omitUndefined } from '../rpc/omit.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { pageOf, type PageRequest } from '../rpc/paging.js'
import { invalidArgument } from '../rpc/status.js'
import type { VertexRagEngine } from '../vertex-rag/service.js'
import { chunkCount, chunkOrdinal } from '../vertex-rag/state.js'
import type { Engines } from '../transport/bound-methods.js'

/** A Semantic Retriever corpus on the console's start page. */
interface CorpusSummary {
  readonly name: string
  readonly displayName?: string
  readonly documents: number
  readonly chunks: number
}

/** A RAG corpus on the start page; `kind`: its RagManagedDb retrieval (KNN: exact, ANN: the graph). */
interface RagCorpusSummary {
  readonly name: string
  readonly displayName?: string
  readonly files: number
  readonly chunks: number
  readonly kind: 'knn' | 'ann'
}

/**
 * A reasoning engine's Memory Bank on the start page: live memories, live sessions, distinct
 * scopes; `displayName` that of its ReasoningEngine resource (none for an engine that memories or
 * sessions brought into being).
 */
interface ReasoningEngineSummary {
  readonly name: string
  readonly displayName?: string
  readonly memories: number
  readonly sessions: number
  readonly scopes: number
}

/** What one project and location holds. */
interface LocationSummary {
  readonly project: string
  readonly location: string
  readonly ragCorpora: readonly RagCorpusSummary[]
  readonly reasoningEngines: readonly ReasoningEngineSummary[]
}

/** GET /console/api/overview. */
interface OverviewJson {
  readonly generation: number
  readonly semanticRetriever: { readonly corpora: readonly CorpusSummary[] }
  readonly locations: readonly LocationSummary[]
}

/** GET /console/api/scopes: a reasoning engine's scopes and the memories in each, in order of their first memory. */
interface ScopesJson {
  readonly scopes: readonly { readonly scope: Readonly<Record<string, string>>; readonly memories: number }[]
}

/** `projects/p/locations/l/...` → p and l; a short name (`reasoningEngines/1`) has neither: empty strings. */
function locationOf(name: string): { project: string; location: string } {
  const m = /^projects\/([^/]+)\/locations\/([^/]+)(?:\/|$)/.exec(name)
  return { project: m?.[1] ?? '', location: m?.[2] ?? '' }
}

/** Whether a read may return the memory at `now`: not expired (sweeps remove expired ones on writes and reads). */
function memoryLive(m: MemoryState, now: number): boolean {
  return m.expireMs === undefined || m.expireMs > now
}

function engineSummary(engine: EngineState, now: number): ReasoningEngineSummary {
  // Before an engine's next expiry (a lower bound its sweeps keep) every memory in it is live: the
  // counts are its maps' sizes, and its scopes those of the scope index, which drops a scope with
  // its last memory. The console asks again after writes, so this stays O(engines), not
  // O(memories), until something may have expired and is not yet swept.
  let memories = engine.memories.size
  let scopes: number
  if (now < engine.nextExpiryMs) scopes = scopeCount(engine)
  else {
    const keys = new Set<string>()
    memories = 0
    for (const m of engine.memories.values()) {
      if (!memoryLive(m, now)) continue
      memories++
      keys.add(m.scopeKey)
    }
    scopes = keys.size
  }
  let sessions = engine.sessions.size
  if (now >= engine.nextSessionExpiryMs) {
    sessions = 0
    for (const s of engine.sessions.values()) if (live(s, now)) sessions++
  }
  return omitUndefined({ name: engine.name, displayName: engine.resource?.displayName, memories, sessions, scopes })
}

/**
 * What the engines hold, counted from their state as it is now (read only: nothing is swept or
 * created). Corpora and engines in creation order; locations ordered by project, then location.
 */
export function overview(engines: Engines, generation: number): OverviewJson {
  const corpora = [...engines.semanticRetriever.corpora().values()].map((c): CorpusSummary => omitUndefined({ name: c.name, displayName: c.displayName, documents: c.documents.size, chunks: c.chunkCount }))
  const locations = new Map<string, { project: string; location: string; ragCorpora: RagCorpusSummary[]; reasoningEngines: ReasoningEngineSummary[] }>()
  const at = (name: string): { ragCorpora: RagCorpusSummary[]; reasoningEngines: ReasoningEngineSummary[] } => {
    const { project, location } = locationOf(name)
    const key = JSON.stringify([project, location])
    let entry = locations.get(key)
    if (!entry) locations.set(key, (entry = { project, location, ragCorpora: [], reasoningEngines: [] }))
    return entry
  }
  for (const c of engines.vertexRag.corpora().values()) {
    const managed = c.vectorDbConfig['ragManagedDb'] as { ann?: unknown } | undefined
    const chunks = [...c.files.values()].reduce((n, f) => n + chunkCount(f), 0)
    at(c.name).ragCorpora.push(omitUndefined({ name: c.name, displayName: c.displayName, files: c.files.size, chunks, kind: managed?.ann === undefined ? ('knn' as const) : ('ann' as const) }))
  }
  const now = engines.memoryBank.now()
  for (const engine of engines.memoryBank.engines().values()) at(engine.name).reasoningEngines.push(engineSummary(engine, now))
  const byPlace = (a: LocationSummary, b: LocationSummary): number => (a.project < b.project ? -1 : a.project > b.project ? 1 : a.location < b.location ? -1 : a.location > b.location ? 1 : 0)
  return { generation, semanticRetriever: { corpora }, locations: [...locations.values()].sort(byPlace) }
}

/** The scopes of the reasoning engine `parent` names, found as listMemories finds it (the same errors). */
export async function scopes(memoryBank: MemoryBank, parent: string | undefined): Promise<Outcome<ScopesJson>> {
  const found = await memoryBank.readEngine(parent)
  if (!found.ok) return found
  const now = memoryBank.now()
  const counts = new Map<string, { scope: Readonly<Record<string, string>>; memories: number }>()
  for (const m of found.response?.memories.values() ?? []) {
    if (!memoryLive(m, now)) continue
    const entry = counts.get(m.scopeKey)
    if (entry) entry.memories++
    else counts.set(m.scopeKey, { scope: m.scope, memories: 1 })
  }
  return { ok: true, response: { scopes: [...counts.values()] } }
}

/** A RAG chunk as the console lists it: its id (v1beta1's chunkId), text and PDF page span. */
interface RagChunkRow {
  readonly chunkId: string
  readonly text: string
  readonly pageSpan?: { readonly firstPage: number; readonly lastPage: number }
}

/** GET /console/api/rag-chunks: one page of a RAG file's chunks in file order (the RAG API lists none). */
interface RagChunksJson {
  readonly chunkCount: number
  readonly chunks: readonly RagChunkRow[]
  readonly nextPageToken?: string
}

/** GET /console/api/rag-chunk-counts: how many chunks each file of a RAG corpus has, in the files' creation order. */
interface RagChunkCountsJson {
  readonly files: readonly { readonly name: string; readonly chunks: number }[]
}

/** The query parameters of a console list: `pageSize` a whole number (0 or absent: 20, at most 100), `pageToken` as the previous page gave it. */
function pageRequest(pageSize: string | null, pageToken: string | null): PageRequest {
  if (pageSize !== null && !/^\d{1,9}$/.test(pageSize)) throw invalidArgument('pageSize', `pageSize must be a whole number (0 for the default of 20); received "${pageSize.slice(0, 40)}".`)
  return omitUndefined({ pageSize: pageSize === null ? undefined : Number(pageSize), pageToken: pageToken ?? undefined })
}

/** One page of the chunks of the RAG file `name`, found as getRagFile finds it (the same errors). */
export async function ragChunks(rag: VertexRagEngine, name: string | undefined, pageSize: string | null, pageToken: string | null): Promise<Outcome<RagChunksJson>> {
  const found = await rag.readFile(name)
  if (!found.ok) return found
  const { file } = found.response
  return toOutcome(async () => {
    // Chunk i's id is chunkId(file.id, i): its ordinal is read from it (no map of every chunk per page).
    const page = pageOf(file.chunks, (c) => chunkOrdinal(file.id, c.id) ?? 0, `console chunks ${file.name}`, pageRequest(pageSize, pageToken), { defaultSize: 20, maxSize: 100 })
    const chunks = page.items.map((c): RagChunkRow => omitUndefined({ chunkId: c.id, text: c.text, pageSpan: c.pageSpan }))
    return omitUndefined({ chunkCount: file.chunks.length, chunks, nextPageToken: page.nextPageToken })
  })
}

/** The chunk count of every file of the RAG corpus `parent`, found as listRagFiles finds it. */
export async function ragChunkCounts(rag: VertexRagEngine, parent: string | undefined): Promise<Outcome<RagChunkCountsJson>> {
  const found = await rag.readCorpus(parent)
  if (!found.ok) return found
  return { ok: true, response: { files: [...found.response.files.values()].map((f) => ({ name: f.name, chunks: chunkCount(f) })) } }
}
