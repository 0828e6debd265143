import { Analyzer, type QuarryIndex, type TermExplanation } from '@quarry/core'
import { matchRanges, queryTerms } from '../matches.js'
import type { Outcome } from '../rpc/outcome.js'
import { rpcStatus, type FieldViolation } from '../rpc/status.js'
import type { CorpusSearch } from '../semantic-retriever/query.js'
import type { Engines } from '../transport/bound-methods.js'
import { betterScore } from '../vertex-rag/metric.js'
import type { Retrieval, RetrievedContext } from '../vertex-rag/retrieve.js'

/** One BM25 term of a result: its frequency in the chunk, documents holding it, idf and its part of the score. */
interface TermJson {
  readonly term: string
  readonly tf: number
  readonly df: number
  readonly idf: number
  readonly score: number
}

/** Why one result ranks where it does. */
interface ExplanationJson {
  /** The chunk: its resource name (Semantic Retriever), or `<ragFile name>/chunks/<chunkId>` (RAG Engine). */
  readonly id: string
  /** The response's score of the result (chunkRelevanceScore, or the context's score). */
  readonly score: number
  /** The dense side: distance and score as the response gives them, or (hybrid) as core fused them, with the normalized score. */
  readonly dense?: { readonly distance: number; readonly score: number; readonly normalized?: number }
  /** The BM25 side: its score, normalized (hybrid: min-max; BM25 alone: over the best), and each query term's part. */
  readonly sparse?: { readonly score: number; readonly normalized?: number; readonly terms: readonly TermJson[] }
  /** Hybrid: alpha × dense normalized + (1 − alpha) × sparse normalized. */
  readonly fused?: { readonly alpha: number; readonly score: number }
  /** `[start, end)` character ranges of the result's text whose analyzed term is one of the query's. */
  readonly highlights: readonly (readonly [number, number])[]
}

/** POST /console/api/explain's answer: the REST call's response, unchanged, and one explanation per result in its order. */
interface ExplainJson {
  readonly response: unknown
  readonly explanations: readonly ExplanationJson[]
  /** Which way the response's scores go: `higher` is better (chunkRelevanceScore, DOT_PRODUCT) or `lower` (the RAG distances). */
  readonly better: 'lower' | 'higher'
}

/** What an explain body names, checked. */
interface ExplainCall {
  readonly method: ExplainMethod
  readonly version: string
  /** The REST call's request: the body's `request` with the path's resource field set. */
  readonly request: Record<string, unknown>
}

interface ExplainMethod {
  readonly versions: readonly string[]
  /** The field the REST path binds: `name` (queryCorpus) or `parent` (retrieveContexts). */
  readonly resource: 'name' | 'parent'
  readonly run: (engines: Engines, version: string, request: Record<string, unknown>) => Promise<Outcome<ExplainJson>>
}

function terms(explained: readonly TermExplanation[] | undefined): TermJson[] {
  return (explained ?? []).map((t) => ({ term: t.term, tf: t.tf, df: t.df, idf: t.idf, score: t.score }))
}

/** The highlights of each text against the query, with the index's own analyzer. */
function highlighter(index: QuarryIndex, query: string): (text: string) => [number, number][] {
  const analyzer = new Analyzer(index.options.text.analyzer)
  const wanted = queryTerms(analyzer, query)
  return (text) => matchRanges(analyzer, text, wanted)
}

function explainQuery(search: CorpusSearch): ExplainJson {
  const highlights = highlighter(search.index, search.query)
  return {
    response: search.response,
    better: 'higher',
    // The score as the response gives it (a float32, chunkRelevanceScore), not the engine's double.
    explanations: search.results.map(({ hit, chunk, json }) => {
      const score = json.chunkRelevanceScore ?? 0
      return { id: chunk.name, score, dense: { distance: hit.distance ?? 0, score }, highlights: highlights(chunk.text) }
    }),
  }
}

function explainContext(r: RetrievedContext, alpha: number, highlights: (text: string) => [number, number][]): ExplanationJson {
  const hybrid = r.hit.explain?.hybrid
  const base = { id: `${r.file.name}/chunks/${r.chunk.id}`, score: r.json.score ?? 0, highlights: highlights(r.chunk.text) }
  if (hybrid) {
    return {
      ...base,
      dense: { distance: hybrid.dense.distance, score: hybrid.dense.score, normalized: hybrid.dense.normalized },
      sparse: { score: hybrid.sparse.score, normalized: hybrid.sparse.normalized, terms: terms(r.hit.explain?.bm25) },
      fused: { alpha: hybrid.alpha, score: hybrid.fused },
    }
  }
  const dense = { distance: r.dense.distance, score: r.dense.score }
  return alpha === 0 ? { ...base, dense, sparse: { score: r.hit.score, normalized: r.relevance, terms: terms(r.hit.explain?.bm25) } } : { ...base, dense }
}

function explainRetrieval(retrieval: Retrieval): ExplainJson {
  const highlights = highlighter(retrieval.index, retrieval.text)
  return { response: retrieval.response, better: betterScore(retrieval.metric), explanations: retrieval.results.map((r) => explainContext(r, retrieval.alpha, highlights)) }
}

async function mapped<T>(outcome: Promise<Outcome<T>>, explain: (value: T) => ExplainJson): Promise<Outcome<ExplainJson>> {
  const done = await outcome
  return done.ok ? { ok: true, response: explain(done.response) } : done
}

/** The calls explain serves, by the `method` an explain body names. */
const EXPLAIN_METHODS: Readonly<Record<string, ExplainMethod>> = {
  'semanticRetriever.queryCorpus': {
    versions: ['v1beta'],
    resource: 'name',
    run: (engines, _version, request) => mapped(engines.semanticRetriever.searchCorpus(request), explainQuery),
  },
  'vertexRag.retrieveContexts': {
    versions: ['v1', 'v1beta1'],
    resource: 'parent',
    run: (engines, version, request) => mapped(engines.vertexRag.explainRetrieval(version === 'v1' ? 'v1' : 'v1beta1', request), explainRetrieval),
  },
}

const BODY_FIELDS = new Set(['method', 'version', 'name', 'parent', 'request'])

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An explain body checked: the call it names, or every problem with it as field violations. */
function readExplainBody(body: unknown): { ok: true; call: ExplainCall } | { ok: false; violations: FieldViolation[] } {
  if (!isObject(body)) return { ok: false, violations: [{ description: 'The body is a JSON object: { "method", "version", "name" or "parent", "request" }.' }] }
  const violations: FieldViolation[] = Object.keys(body)
    .filter((key) => !BODY_FIELDS.has(key))
    .map((key) => ({ field: key.slice(0, 100), description: `"${key.slice(0, 100)}" is not a field of an explain body (method, version, name or parent, request).` }))
  const allowed = Object.keys(EXPLAIN_METHODS)
  const name = body['method']
  const method = typeof name === 'string' && Object.hasOwn(EXPLAIN_METHODS, name) ? EXPLAIN_METHODS[name] : undefined
  if (!method) {
    violations.push({ field: 'method', description: `method must be one of ${allowed.join(', ')}; received ${typeof name === 'string' ? `"${name.slice(0, 100)}"` : 'none'}. (Memory Bank's retrieveMemories has no explanation: its answer holds each memory's distance.)` })
    return { ok: false, violations }
  }
  const version = body['version']
  if (typeof version !== 'string' || !method.versions.includes(version)) {
    violations.push({ field: 'version', description: `${String(name)} is served as ${method.versions.join(', ')}; received ${typeof version === 'string' ? `"${version.slice(0, 100)}"` : 'none'}.` })
  }
  const resource = body[method.resource]
  if (typeof resource !== 'string') violations.push({ field: method.resource, description: `${method.resource} is required: the resource the REST path of ${String(name)} names.` })
  const other = method.resource === 'name' ? 'parent' : 'name'
  if (other in body) violations.push({ field: other, description: `${String(name)} names its resource by ${method.resource}, not ${other}.` })
  const request = body['request'] ?? {}
  if (!isObject(request)) violations.push({ field: 'request', description: 'request is the REST call\'s body: a JSON object.' })
  if (violations.length > 0 || typeof version !== 'string' || typeof resource !== 'string' || !isObject(request)) return { ok: false, violations }
  // As the REST server builds it: the body's fields, then the path's.
  return { ok: true, call: { method, version, request: { ...request, [method.resource]: resource } } }
}

/** POST /console/api/explain: the REST call's response and each result's explanation, or the Status the REST call would answer. */
export async function explain(engines: Engines, body: unknown): Promise<Outcome<ExplainJson>> {
  const read = readExplainBody(body)
  if (!read.ok) {
    const first = read.violations[0]?.description ?? 'Invalid explain body.'
    return { ok: false, status: rpcStatus('INVALID_ARGUMENT', read.violations.length > 1 ? `${first} (and ${read.violations.length - 1} more)` : first, read.violations) }
  }
  return read.call.method.run(engines, read.call.version, read.call.request)
}
