import type { MemoryBank } from '../memory-bank/service.js'
import { live } from '../memory-bank/sessions.js'
import type { EngineState, MemoryState } from '../memory-bank/state.js'
import { omitUndefined } from '../rpc/omit.js'
import type { Outcome } from '../rpc/outcome.js'
import type { Engines } from '../transport/bound-methods.js'

/** A Semantic Retriever corpus on the console's start page. */
export interface CorpusSummary {
  readonly name: string
  readonly displayName?: string
  readonly documents: number
  readonly chunks: number
}

/** A RAG corpus on the start page; `kind`: its RagManagedDb retrieval (KNN: exact, ANN: the graph). */
export interface RagCorpusSummary {
  readonly name: string
  readonly displayName?: string
  readonly files: number
  readonly chunks: number
  readonly kind: 'knn' | 'ann'
}

/** A reasoning engine's Memory Bank on the start page: live memories, live sessions, distinct scopes. */
export interface ReasoningEngineSummary {
  readonly name: string
  readonly memories: number
  readonly sessions: number
  readonly scopes: number
}

/** What one project and location holds. */
export interface LocationSummary {
  readonly project: string
  readonly location: string
  readonly ragCorpora: readonly RagCorpusSummary[]
  readonly reasoningEngines: readonly ReasoningEngineSummary[]
}

/** GET /console/api/overview. */
export interface OverviewJson {
  readonly generation: number
  readonly semanticRetriever: { readonly corpora: readonly CorpusSummary[] }
  readonly locations: readonly LocationSummary[]
}

/** GET /console/api/scopes: a reasoning engine's scopes and the memories in each, in order of their first memory. */
export interface ScopesJson {
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
  const memories = [...engine.memories.values()].filter((m) => memoryLive(m, now))
  return {
    name: engine.name,
    memories: memories.length,
    sessions: [...engine.sessions.values()].filter((s) => live(s, now)).length,
    scopes: new Set(memories.map((m) => m.scopeKey)).size,
  }
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
    const chunks = [...c.files.values()].reduce((n, f) => n + f.chunks.length, 0)
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
