// @ts-check
// The query playground: the API's own knobs, results with their explanations, the request as curl
// and as Node client code. It sends POST /console/api/explain with exactly the REST body.
import { send } from './api.js'
import { copyBlock, errorBox, field, fill, h, marked, num, table, uid } from './dom.js'

/**
 * @typedef {object} Row one result as shown
 * @property {string} id
 * @property {number} score
 * @property {string} source where it comes from, as the API names it (a display name, a URI, a scope: user text)
 * @property {string} [note] what the console adds after the source (a PDF chunk's page span)
 * @property {string} text
 */

/**
 * @typedef {object} Explanation one entry of the explain endpoint's answer
 * @property {string} id
 * @property {number} score
 * @property {{ distance: number, score: number, normalized?: number }} [dense]
 * @property {{ score: number, normalized?: number, terms: { term: string, tf: number, df: number, idf: number, score: number }[] }} [sparse]
 * @property {{ alpha: number, score: number }} [fused]
 * @property {number[][]} highlights
 */

/**
 * @typedef {object} Kind one API's query method
 * @property {string} [method] the explain endpoint's method name (none: the REST call itself, unexplained)
 * @property {string} version
 * @property {'name' | 'parent'} target which field names the resource
 * @property {(resource: string) => string} targetOf the resource the REST call names
 * @property {(target: string) => string} path the REST path
 * @property {(target: string, body: string) => string} node Google's Node client call
 * @property {(resource: string) => HTMLElement[]} knobs the controls (each with a `name`)
 * @property {(form: HTMLFormElement, resource: string) => { request?: unknown, problem?: string }} request
 * @property {(response: any) => Row[]} rows
 * @property {string} scoreNote what the answer's score means
 * @property {string} scoreLabel what each result's number is called (score, distance)
 * @property {'lower' | 'higher'} better which way the number goes (the explain answer's `better` overrides it)
 */

/** Results longer than this (characters) show their start, with a button to show the rest. */
const CLAMP_CHARS = 300
/** Or with more lines than this. */
const CLAMP_LINES = 4

/** @param {HTMLFormElement} form @param {string} name */
function value(form, name) {
  const element = form.elements.namedItem(name)
  return element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement || element instanceof HTMLSelectElement ? element.value.trim() : ''
}

/** A number knob: empty leaves the field unset. @param {HTMLFormElement} form @param {string} name */
function numberOf(form, name) {
  const text = value(form, name)
  return text === '' ? undefined : Number(text)
}

/** @param {Record<string, unknown>} record drops unset fields */
function defined(record) {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined && !(typeof v === 'object' && v !== null && Object.keys(v).length === 0)))
}

/** @param {string} name @param {string} label @param {string} hint @param {Record<string, string>} [attrs] */
function numberKnob(name, label, hint, attrs = {}) {
  return field(label, h('input', { type: 'number', name, step: 'any', inputmode: 'decimal', ...attrs }), hint)
}

// Only the client package the app installs (no google-gax import): the clients send the API key
// as their credentials, which the local server accepts as it accepts any.
const CLIENT_OPTIONS = () => `const { hostname, port } = new URL('${location.origin}')
const opts = { apiEndpoint: hostname, port: Number(port), protocol: 'http', fallback: true, apiKey: 'local' }`

/** @typedef {'semanticRetriever' | 'vertexRag' | 'memoryBank'} KindName */

/** @type {Record<KindName, Kind>} */
export const KINDS = {
  semanticRetriever: {
    method: 'semanticRetriever.queryCorpus',
    version: 'v1beta',
    target: 'name',
    targetOf: (corpus) => corpus,
    path: (name) => `/v1beta/${name}:query`,
    node: (name, body) => `import generativelanguage from '@google-ai/generativelanguage'

${CLIENT_OPTIONS()}
const retriever = new generativelanguage.v1beta.RetrieverServiceClient(opts)
const request = ${body}
const [response] = await retriever.queryCorpus({ name: '${name}', ...request })
console.log(response.relevantChunks)`,
    knobs: () => [
      numberKnob('resultsCount', 'resultsCount', 'Results to return (1–100; the API defaults to 10).', { min: '1', max: '100' }),
      field('metadataFilters (JSON)', h('textarea', { name: 'metadataFilters', rows: 3, spellcheck: 'false', placeholder: '[{"key": "chunk.custom_metadata.genre", "conditions": [{"stringValue": "fiction", "operation": "EQUAL"}]}]' }), 'A JSON list of MetadataFilter, as the REST body takes it.'),
    ],
    request: (form) => {
      const filters = value(form, 'metadataFilters')
      /** @type {unknown} */
      let metadataFilters
      if (filters !== '') {
        try {
          metadataFilters = JSON.parse(filters)
        } catch (error) {
          return { problem: `metadataFilters is not JSON: ${error instanceof Error ? error.message : String(error)}` }
        }
      }
      return { request: defined({ query: value(form, 'query'), resultsCount: numberOf(form, 'resultsCount'), metadataFilters }) }
    },
    rows: (response) =>
      (response.relevantChunks ?? []).map((/** @type {any} */ r) => ({
        id: r.chunk?.name ?? '',
        score: r.chunkRelevanceScore ?? 0,
        source: String(r.chunk?.name ?? '').replace(/\/chunks\/[^/]+$/, ''),
        text: r.chunk?.data?.stringValue ?? '',
      })),
    scoreNote: 'score: chunkRelevanceScore, higher is more relevant.',
    scoreLabel: 'score',
    better: 'higher',
  },
  vertexRag: {
    method: 'vertexRag.retrieveContexts',
    version: 'v1beta1',
    target: 'parent',
    targetOf: (corpus) => corpus.replace(/\/ragCorpora\/.*$/, ''),
    path: (parent) => `/v1beta1/${parent}:retrieveContexts`,
    node: (parent, body) => `import aiplatform from '@google-cloud/aiplatform'

${CLIENT_OPTIONS()}
const rag = new aiplatform.v1beta1.VertexRagServiceClient(opts)
const request = ${body}
const [response] = await rag.retrieveContexts({ parent: '${parent}', ...request })
console.log(response.contexts?.contexts)`,
    knobs: () => [
      numberKnob('topK', 'topK', 'ragRetrievalConfig.topK (the API defaults to 10).', { min: '1' }),
      numberKnob('alpha', 'alpha', 'ragRetrievalConfig.hybridSearch.alpha: 0 = BM25 only, 1 = dense only (default 0.5).', { min: '0', max: '1' }),
      field('Threshold kind', h('select', { name: 'thresholdKind' }, h('option', { value: '' }, 'none'), h('option', { value: 'vectorDistanceThreshold' }, 'vectorDistanceThreshold'), h('option', { value: 'vectorSimilarityThreshold' }, 'vectorSimilarityThreshold'))),
      numberKnob('threshold', 'Threshold', 'ragRetrievalConfig.filter.<kind>.'),
      field('metadataFilter', h('input', { type: 'text', name: 'metadataFilter', spellcheck: 'false', autocomplete: 'off', placeholder: 'year >= 2020' }), 'ragRetrievalConfig.filter.metadataFilter, the API\'s filter syntax.'),
    ],
    request: (form, corpus) => {
      const kind = value(form, 'thresholdKind')
      const threshold = numberOf(form, 'threshold')
      const alpha = numberOf(form, 'alpha')
      const filter = defined({ ...(kind !== '' && threshold !== undefined ? { [kind]: threshold } : {}), metadataFilter: value(form, 'metadataFilter') || undefined })
      const ragRetrievalConfig = defined({ topK: numberOf(form, 'topK'), hybridSearch: alpha === undefined ? undefined : { alpha }, filter })
      return { request: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: defined({ text: value(form, 'query'), ragRetrievalConfig }) } }
    },
    rows: (response) =>
      (response.contexts?.contexts ?? []).map((/** @type {any} */ c) => ({
        id: c.chunk?.chunkId ?? c.sourceUri ?? '',
        score: c.score ?? 0,
        source: c.sourceDisplayName || c.sourceUri || '',
        ...(c.chunk?.pageSpan ? { note: ` (pages ${c.chunk.pageSpan.firstPage}–${c.chunk.pageSpan.lastPage})` } : {}),
        text: c.text ?? '',
      })),
    scoreNote: "score: the context's score on the corpus metric's scale: lower is closer for the distances (COSINE_DISTANCE, EUCLIDEAN_SQUARED_DISTANCE), higher for DOT_PRODUCT (docs/vertex-rag.md, Scores).",
    scoreLabel: 'score',
    // Every metric but DOT_PRODUCT is a distance; the explain answer says which this corpus has.
    better: 'lower',
  },
  memoryBank: {
    // retrieveMemories is dense only and has no explain: the answer's distance is the explanation.
    version: 'v1beta1',
    target: 'parent',
    targetOf: (engine) => engine,
    path: (parent) => `/v1beta1/${parent}/memories:retrieve`,
    node: (parent, body) => `import aiplatform from '@google-cloud/aiplatform'

${CLIENT_OPTIONS()}
const memories = new aiplatform.v1beta1.MemoryBankServiceClient(opts)
const request = ${body}
const [response] = await memories.retrieveMemories({ parent: '${parent}', ...request })
console.log(response.retrievedMemories)`,
    knobs: () => [
      field('scope (JSON)', h('input', { type: 'text', name: 'scope', spellcheck: 'false', autocomplete: 'off', value: '{"user_id": "u1"}' }), 'The exact scope to search: same keys and values.'),
      numberKnob('topK', 'topK', 'similaritySearchParams.topK (the API defaults to 3).', { min: '1' }),
    ],
    request: (form) => {
      /** @type {unknown} */
      let scope
      try {
        scope = JSON.parse(value(form, 'scope') || '{}')
      } catch (error) {
        return { problem: `scope is not JSON: ${error instanceof Error ? error.message : String(error)}` }
      }
      return { request: { scope, similaritySearchParams: defined({ searchQuery: value(form, 'query'), topK: numberOf(form, 'topK') }) } }
    },
    rows: (response) =>
      (response.retrievedMemories ?? []).map((/** @type {any} */ r) => ({
        id: r.memory?.name ?? '',
        score: r.distance ?? 0,
        source: `scope ${JSON.stringify(r.memory?.scope ?? {})}`,
        text: r.memory?.fact ?? '',
      })),
    scoreNote: 'distance: the Euclidean distance of unit-length embeddings in [0, 2] (smaller is more similar; a missing distance is 0). Memory Bank retrieval is dense only: there is nothing more to explain.',
    scoreLabel: 'distance',
    better: 'lower',
  },
}

/** Quotes a string for a POSIX shell. @param {string} text */
function shellQuote(text) {
  return `'${text.replaceAll("'", "'\\''")}'`
}

/**
 * The request as curl and as Node client code.
 * @param {Kind} kind @param {string} target @param {unknown} request
 */
function requestCode(kind, target, request) {
  const curl = `curl -X POST ${location.origin}${kind.path(target)} \\\n  -H 'Content-Type: application/json' \\\n  -d ${shellQuote(JSON.stringify(request))}`
  return h('div', { class: 'codes' }, copyBlock('curl', curl), copyBlock('Node client', kind.node(target, JSON.stringify(request, null, 2))))
}

/** @param {Explanation | undefined} e @param {'lower' | 'higher'} better */
function explanation(e, better) {
  if (!e) return h('p', { class: 'muted' }, 'No explanation for this result.')
  const parts = []
  if (e.sparse) {
    parts.push(
      h('p', {}, `BM25 score ${num(e.sparse.score)}`, e.sparse.normalized !== undefined ? `, normalized ${num(e.sparse.normalized)}` : ''),
      table('BM25 terms', [['term', (t) => h('code', {}, t.term)], ['tf', (t) => num(t.tf)], ['df', (t) => num(t.df)], ['idf', (t) => num(t.idf)], ['contribution', (t) => num(t.score)]], e.sparse.terms),
    )
  }
  if (e.dense) parts.push(h('p', {}, `Dense distance ${num(e.dense.distance)}, score ${num(e.dense.score)}`, e.dense.normalized !== undefined ? `, normalized ${num(e.dense.normalized)}` : ''))
  if (e.fused) parts.push(h('p', {}, `Fused score ${num(e.fused.score)} with alpha ${num(e.fused.alpha)} (alpha × dense + (1 − alpha) × BM25, both normalized)`))
  parts.push(h('p', {}, `Score in the answer: ${num(e.score)}${direction(better)}`))
  return h('div', { class: 'explain' }, parts)
}

/** "(lower is better)" / "(higher is better)": said next to every score. @param {'lower' | 'higher'} better */
function direction(better) {
  return ` (${better} is better)`
}

/**
 * A result's text: whole when short; else its start (a few lines) and a button that shows the rest
 * and hides it again, so a page of long chunks stays short.
 * @param {string} text @param {number[][]} highlights
 */
function resultText(text, highlights) {
  const body = marked(text, highlights)
  if (text.length <= CLAMP_CHARS && text.split('\n').length <= CLAMP_LINES) return body
  body.id = uid('text')
  body.classList.add('clamped')
  const button = h('button', { type: 'button', class: 'more', 'aria-expanded': 'false', 'aria-controls': body.id }, 'Show more')
  button.addEventListener('click', () => {
    const open = body.classList.toggle('clamped') === false
    button.setAttribute('aria-expanded', String(open))
    button.textContent = open ? 'Show less' : 'Show more'
  })
  return h('div', { class: 'hit-text' }, body, button)
}

/**
 * @param {Row[]} rows
 * @param {Explanation[] | undefined} explanations
 * @param {{ label: string, better: 'lower' | 'higher' }} score what the numbers are and which way they go
 */
function resultList(rows, explanations, score) {
  if (rows.length === 0) return h('p', { class: 'empty' }, 'No results.')
  return h(
    'ol',
    { class: 'hits', 'aria-label': 'Results' },
    rows.map((row, i) => {
      const e = explanations?.[i]
      return h(
        'li',
        { class: 'hit', 'data-rank': i + 1 },
        h(
          'div',
          { class: 'hit-head' },
          h('span', { class: 'rank' }, `#${i + 1}`),
          h('span', { class: 'score' }, `${score.label} `, h('data', { value: String(row.score), class: 'score-value' }, num(row.score)), h('span', { class: 'direction' }, direction(score.better))),
          h('code', { class: 'hit-id' }, e?.id ?? row.id),
        ),
        // The source is isolated: a bidi control in a display name must not reorder the page span after it.
        h('p', { class: 'source' }, 'Source: ', h('bdi', {}, row.source), row.note ?? ''),
        resultText(row.text, e?.highlights ?? []),
        explanations ? h('details', {}, h('summary', {}, `Explain result #${i + 1}`), explanation(e, score.better)) : null,
      )
    }),
  )
}

/**
 * The playground of one corpus.
 * @param {KindName} which
 * @param {string} corpus the corpus's (or reasoning engine's) resource name
 */
export function playground(which, corpus) {
  const kind = KINDS[which]
  const out = h('div', { class: 'playground-out', 'aria-live': 'polite' })
  const queryId = uid('query')
  const form = h(
    'form',
    { class: 'playground', role: 'search', 'aria-label': 'Query playground' },
    h('div', { class: 'field query' }, h('label', { for: queryId }, 'Query'), h('input', { id: queryId, name: 'query', type: 'search', autocomplete: 'off', required: true })),
    h('div', { class: 'knobs' }, kind.knobs(corpus)),
    h('button', { type: 'submit', class: 'primary' }, 'Search'),
  )
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const built = kind.request(form, corpus)
    if (built.problem !== undefined) return fill(out, h('div', { class: 'error', role: 'alert' }, built.problem))
    const target = kind.targetOf(corpus)
    fill(out, h('p', { class: 'muted' }, 'Searching…'))
    const answer = kind.method
      ? await send({ method: 'POST', path: '/console/api/explain', body: { method: kind.method, version: kind.version, [kind.target]: target, request: built.request } })
      : await send({ method: 'POST', path: kind.path(target), body: built.request })
    const code = requestCode(kind, target, built.request)
    if (!answer.ok) return fill(out, errorBox(answer.error), code)
    const response = kind.method ? answer.json.response ?? {} : answer.json
    const score = { label: kind.scoreLabel, better: kind.method && (answer.json.better === 'lower' || answer.json.better === 'higher') ? answer.json.better : kind.better }
    fill(out, h('h3', {}, 'Results'), h('p', { class: 'muted' }, kind.scoreNote), resultList(kind.rows(response), kind.method ? answer.json.explanations ?? [] : undefined, score), h('h3', {}, 'The request sent'), code)
  })
  const headingId = uid('h')
  return h('section', { class: 'card', 'aria-labelledby': headingId }, h('h2', { id: headingId }, 'Query playground'), form, out)
}
