// @ts-check
// The start page: every project and location in use, from GET /console/api/overview, and the forms
// that create corpora.
import { finished, get, send } from './api.js'
import { errorBox, field, fill, h, link, table, uid } from './dom.js'

/** @param {string} title @param {HTMLElement[]} body */
function section(title, ...body) {
  const id = uid('h')
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), body)
}

/** @param {any} overview */
function overviewTables(overview) {
  const sr = overview.semanticRetriever?.corpora ?? []
  const locations = overview.locations ?? []
  return [
    section(
      'Semantic Retriever corpora (v1beta)',
      table('Semantic Retriever corpora', [['corpus', (c) => link(c.name)], ['display name', (c) => c.displayName ?? ''], ['documents', (c) => c.documents], ['chunks', (c) => c.chunks]], sr),
    ),
    ...locations.map((/** @type {any} */ l) =>
      section(
        `projects/${l.project}/locations/${l.location}`,
        table('RAG corpora (v1beta1)', [['RAG corpus', (c) => link(c.name)], ['display name', (c) => c.displayName ?? ''], ['files', (c) => c.files], ['chunks', (c) => c.chunks], ['index', (c) => c.kind ?? '']], l.ragCorpora ?? []),
        table('Memory Bank reasoning engines (v1beta1)', [['reasoning engine', (e) => link(e.name)], ['display name', (e) => e.displayName ?? ''], ['memories', (e) => e.memories], ['scopes', (e) => e.scopes], ['sessions', (e) => e.sessions]], l.reasoningEngines ?? []),
      ),
    ),
  ]
}

/**
 * A create form: its fields, and what to call with their values.
 * @param {string} title
 * @param {[string, string, string, boolean?][]} fields [name, label, default, required]
 * @param {(values: Record<string, string>) => Promise<import('./api.js').Answer>} create
 */
function createForm(title, fields, create) {
  const status = h('div', { 'aria-live': 'polite' })
  const form = h(
    'form',
    { class: 'create' },
    // A required field is marked for the browser, which then refuses to submit it empty (as the API would).
    fields.map(([name, label, value, required]) => field(label, h('input', { type: 'text', name, value, autocomplete: 'off', spellcheck: 'false', required }))),
    h('button', { type: 'submit' }, title),
    status,
  )
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const values = Object.fromEntries(fields.map(([name]) => {
      const input = form.elements.namedItem(name)
      return [name, input instanceof HTMLInputElement ? input.value.trim() : '']
    }))
    fill(status, h('p', { class: 'muted' }, 'Creating…'))
    const answer = await create(values)
    if (!answer.ok) return fill(status, errorBox(answer.error))
    fill(status, h('p', {}, 'Created ', link(answer.json.name), '.'))
  })
  return form
}

/** @param {any} overview */
function createForms(overview) {
  const first = overview?.locations?.[0]
  const parent = first ? `projects/${first.project}/locations/${first.location}` : 'projects/my-project/locations/us-central1'
  return section(
    'Create',
    h('h3', {}, 'A Semantic Retriever corpus'),
    createForm('Create corpus', [['id', 'Corpus id (optional: corpora/<id>)', ''], ['displayName', 'Display name', '']], (v) =>
      send({ method: 'POST', path: '/v1beta/corpora', body: { ...(v.id ? { name: `corpora/${v.id}` } : {}), ...(v.displayName ? { displayName: v.displayName } : {}) } }),
    ),
    h('h3', {}, 'A RAG corpus'),
    createForm('Create RAG corpus', [['parent', 'Parent (projects/<p>/locations/<l>)', parent, true], ['displayName', 'Display name', '', true]], async (v) =>
      finished(await send({ method: 'POST', path: `/v1beta1/${v.parent}/ragCorpora`, body: { displayName: v.displayName ?? '' } }), 'v1beta1'),
    ),
  )
}

/**
 * Renders the start page into `main`; resolves to the generation shown (undefined when the
 * overview endpoint failed). With `refresh`, only the tables are redrawn (what a person is typing
 * into the create forms stays).
 * @param {HTMLElement} main
 * @param {{ refresh?: boolean }} [options]
 * @returns {Promise<number | undefined>}
 */
export async function renderOverview(main, options = {}) {
  const answer = await get('/console/api/overview')
  const tables = main.querySelector('#overview-tables')
  if (answer.ok && options.refresh && tables) {
    fill(tables, generationLine(answer.json.generation), overviewTables(answer.json))
    return Number(answer.json.generation)
  }
  const heading = h('h1', {}, 'Overview')
  if (answer.ok) {
    fill(main, heading, h('div', { id: 'overview-tables', class: 'stack' }, generationLine(answer.json.generation), overviewTables(answer.json)), createForms(answer.json))
    return Number(answer.json.generation)
  }
  // Without the overview endpoint the Semantic Retriever's own list still answers.
  const corpora = await get('/v1beta/corpora', { pageSize: '100' })
  fill(
    main,
    heading,
    errorBox(answer.error),
    corpora.ok
      ? section('Semantic Retriever corpora (v1beta)', table('Semantic Retriever corpora', [['corpus', (c) => link(c.name)], ['display name', (c) => c.displayName ?? '']], corpora.json.corpora ?? []))
      : errorBox(corpora.error),
    createForms(undefined),
  )
  return undefined
}

/** @param {unknown} generation */
function generationLine(generation) {
  return h('p', { class: 'muted', id: 'generation' }, `Generation ${generation}: refreshed live as data changes.`)
}
