// @ts-check
// One page per kind of resource, chosen by the shape of its name (the route table in app.js).
import { finished, get, send, uploadRagFile, withQuery } from './api.js'
import { deleteControl, errorBox, fill, h, link, num, table, uid } from './dom.js'
import { pagedList } from './paged.js'
import { playground } from './playground.js'

/** @typedef {(main: HTMLElement, name: string) => Promise<void>} View */

/** A resource's fields as a definition list. @param {[string, import('./dom.js').Child | import('./dom.js').Child[]][]} rows */
function facts(rows) {
  return h('dl', { class: 'facts' }, rows.filter(([, v]) => v !== undefined && v !== '').flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))
}

/** Metadata as compact JSON. @param {unknown} value */
function json(value) {
  return value === undefined || value === null || (Array.isArray(value) && value.length === 0) ? '—' : h('code', { class: 'json' }, JSON.stringify(value))
}

/**
 * A page's heading: the resource's title (often its display name) and its name. Each is isolated
 * (`<bdi>`): a bidi control in a display name (U+202E) would otherwise reorder the name after it.
 * @param {string} name @param {string} [title]
 */
function heading(name, title) {
  return h('h1', {}, h('bdi', {}, title ?? name.split('/').slice(-2).join(' ')), ' ', h('small', { class: 'muted' }, h('bdi', {}, name)))
}

/**
 * Gets a resource and renders it, or the API's error.
 * @param {HTMLElement} main
 * @param {string} path
 * @param {(resource: any) => (HTMLElement | null)[]} body
 */
async function show(main, path, body) {
  const answer = await get(path)
  if (!answer.ok) return fill(main, h('h1', {}, path), errorBox(answer.error))
  fill(main, ...body(answer.json))
}

/** After a delete, back to the parent's page. @param {string} name */
const up = (name) => () => {
  const parent = name.split('/').slice(0, -2).join('/')
  location.hash = parent.includes('/') && !/^projects\/[^/]+\/locations\/[^/]+$/.test(parent) ? `#/${parent}` : '#/'
}

/** @param {string} path */
const del = (path) => () => send({ method: 'DELETE', path })
/** A delete answered as a long-running operation. @param {string} path */
const delOp = (path) => async () => finished(await send({ method: 'DELETE', path }), 'v1beta1')

/** @type {View} */
export const srCorpus = (main, name) =>
  show(main, `/v1beta/${name}`, (c) => [
    heading(name, c.displayName || name),
    facts([['name', c.name], ['display name', c.displayName], ['created', c.createTime], ['updated', c.updateTime]]),
    playground('semanticRetriever', name),
    pagedList({ title: 'Documents', path: `/v1beta/${name}/documents`, itemsKey: 'documents', columns: [['document', (d) => link(d.name)], ['display name', (d) => d.displayName ?? ''], ['custom metadata', (d) => json(d.customMetadata)], ['updated', (d) => d.updateTime ?? '']] }),
    deleteControl(name, del(withQuery(`/v1beta/${name}`, { force: 'true' })), up(name)),
  ])

/** @type {View} */
export const srDocument = (main, name) =>
  show(main, `/v1beta/${name}`, (d) => [
    heading(name, d.displayName || name),
    facts([['name', d.name], ['corpus', link(name.replace(/\/documents\/.*$/, ''))], ['custom metadata', json(d.customMetadata)], ['updated', d.updateTime]]),
    pagedList({
      title: 'Chunks',
      path: `/v1beta/${name}/chunks`,
      itemsKey: 'chunks',
      columns: [['chunk', (c) => h('code', {}, c.name.split('/').pop())], ['text', (c) => h('p', { class: 'text' }, c.data?.stringValue ?? '')], ['custom metadata', (c) => json(c.customMetadata)], ['state', (c) => c.state ?? '']],
    }),
    deleteControl(name, del(withQuery(`/v1beta/${name}`, { force: 'true' })), up(name)),
  ])

/** @param {any} f */
function ragSource(f) {
  if (f.gcsSource) return `gcsSource: ${(f.gcsSource.uris ?? []).join(', ')}`
  if (f.directUploadSource) return 'directUploadSource (uploaded)'
  const key = Object.keys(f).find((k) => k.endsWith('Source'))
  return key ? `${key}: ${JSON.stringify(f[key])}` : '—'
}

/** @param {string} corpus */
function uploader(corpus) {
  const status = h('div', { 'aria-live': 'polite' })
  const inputId = uid('upload')
  const input = h('input', { type: 'file', id: inputId, multiple: true })
  /** @param {FileList | File[]} files */
  const send = async (files) => {
    for (const file of Array.from(files)) {
      fill(status, h('p', { class: 'muted' }, `Uploading ${file.name}…`))
      const answer = await uploadRagFile(corpus, file)
      if (!answer.ok) return fill(status, errorBox(answer.error))
      fill(status, h('p', {}, 'Uploaded ', link(answer.json.ragFile?.name ?? corpus, answer.json.ragFile?.displayName), '.'))
    }
    window.dispatchEvent(new HashChangeEvent('hashchange'))
  }
  input.addEventListener('change', () => input.files && void send(input.files))
  const zone = h('div', { class: 'drop' }, h('label', { for: inputId }, 'Upload files (.txt, .md, .html, .json, .pdf): choose, or drop them here'), input, status)
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over') })
  zone.addEventListener('dragleave', () => zone.classList.remove('over'))
  zone.addEventListener('drop', (e) => {
    e.preventDefault()
    zone.classList.remove('over')
    if (e.dataTransfer?.files.length) void send(e.dataTransfer.files)
  })
  return zone
}

/**
 * Each file's chunk count (the console's endpoint: the RAG API has none); empty when it fails.
 * @param {string} corpus
 * @returns {Promise<Map<string, number>>}
 */
async function chunkCounts(corpus) {
  const answer = await get('/console/api/rag-chunk-counts', { parent: corpus })
  return new Map(answer.ok ? (answer.json.files ?? []).map((/** @type {any} */ f) => [f.name, f.chunks]) : [])
}

/** @param {{ firstPage: number, lastPage: number } | undefined} span */
function pages(span) {
  return span ? (span.firstPage === span.lastPage ? `page ${span.firstPage}` : `pages ${span.firstPage}–${span.lastPage}`) : '—'
}

/** @type {View} */
export const ragCorpus = async (main, name) => {
  const counts = await chunkCounts(name)
  await show(main, `/v1beta1/${name}`, (c) => [
    heading(name, c.displayName || name),
    facts([['name', c.name], ['description', c.description], ['files', c.ragFilesCount === undefined ? undefined : num(c.ragFilesCount)], ['vector DB', json(c.vectorDbConfig)], ['created', c.createTime]]),
    uploader(name),
    playground('vertexRag', name),
    pagedList({
      title: 'Files',
      path: `/v1beta1/${name}/ragFiles`,
      itemsKey: 'ragFiles',
      columns: [['file', (f) => link(f.name, f.displayName || f.name)], ['source', ragSource], ['size (bytes)', (f) => f.sizeBytes ?? '—'], ['chunks', (f) => counts.get(f.name) ?? '—'], ['type', (f) => f.ragFileType ?? ''], ['metadata', (f) => f.userMetadata ?? '—']],
    }),
    deleteControl(name, delOp(withQuery(`/v1beta1/${name}`, { force: 'true' })), up(name)),
  ])
}

/** @type {View} */
export const ragFile = (main, name) =>
  show(main, `/v1beta1/${name}`, (f) => [
    heading(name, f.displayName || name),
    facts([['name', f.name], ['corpus', link(name.replace(/\/ragFiles\/.*$/, ''))], ['source', ragSource(f)], ['size (bytes)', f.sizeBytes], ['type', f.ragFileType], ['metadata', f.userMetadata], ['state', f.fileStatus?.state], ['created', f.createTime]]),
    pagedList({
      title: 'Chunks',
      path: '/console/api/rag-chunks',
      query: { name },
      itemsKey: 'chunks',
      columns: [['chunk', (c) => h('code', {}, c.chunkId)], ['pages', (c) => pages(c.pageSpan)], ['text', (c) => h('p', { class: 'text' }, c.text)]],
    }),
    deleteControl(name, delOp(`/v1beta1/${name}`), up(name)),
  ])

/**
 * The engine's scopes (the console's endpoint: the API lists none) and the first of them.
 * @param {string} engine
 */
async function scopes(engine) {
  const id = uid('h')
  const answer = await get('/console/api/scopes', { parent: engine })
  const body = answer.ok
    ? table('Scopes', [['scope', (s) => h('code', {}, JSON.stringify(s.scope))], ['memories', (s) => s.memories], ['list its memories', (s) => h('code', {}, scopeFilter(s.scope))]], answer.json.scopes ?? [])
    : errorBox(answer.error)
  /** @type {Record<string, string> | undefined} */
  const first = answer.ok ? answer.json.scopes?.[0]?.scope : undefined
  return { section: h('section', { 'aria-labelledby': id }, h('h2', { id }, 'Scopes'), body), first }
}

/**
 * The memories list's filter for exactly one scope: the whole-scope comparison
 * `scope = "<the scope as JSON>"`. `scope.<key>` takes only keys that are identifiers (not
 * `user-id`) and also matches the scopes that hold more keys. The filter's string escapes are
 * JSON's (`\"`, `\\`, `\uXXXX`), so quoting the JSON text once more writes any value.
 * @param {Record<string, string>} scope
 */
function scopeFilter(scope) {
  return `scope = ${JSON.stringify(JSON.stringify(scope))}`
}

/**
 * The engine's ReasoningEngine resource as facts, or why there is none: an engine that memories or
 * sessions brought into being (the API lets them be written under any engine name) has no resource,
 * and getReasoningEngine answers NOT_FOUND.
 * @param {import('./api.js').Answer} answer
 */
function engineFacts(answer) {
  if (answer.ok) {
    const e = answer.json
    return facts([['name', e.name], ['display name', e.displayName], ['description', e.description], ['created', e.createTime], ['updated', e.updateTime]])
  }
  if (answer.error.code === 404) return h('p', { class: 'note' }, 'No ReasoningEngine resource by this name (getReasoningEngine answers NOT_FOUND): its memories and sessions were written under the name without creating the engine, so there is nothing to delete but them.')
  return errorBox(answer.error)
}

/** @type {View} */
export const engine = async (main, name) => {
  const untitled = `Reasoning engine ${name.split('/').pop()}`
  fill(main, heading(name, untitled), h('p', { class: 'muted' }, 'Loading…'))
  const [resource, found] = await Promise.all([get(`/v1beta1/${name}`), scopes(name)])
  const retrieve = playground('memoryBank', name)
  const scopeInput = retrieve.querySelector('input[name="scope"]')
  if (found.first && scopeInput instanceof HTMLInputElement) scopeInput.value = JSON.stringify(found.first)
  fill(
    main,
    heading(name, (resource.ok && resource.json.displayName) || untitled),
    engineFacts(resource),
    found.section,
    retrieve,
    pagedList({
      title: 'Memories',
      path: `/v1beta1/${name}/memories`,
      itemsKey: 'memories',
      filter: { hint: 'AIP-160, e.g. scope.user_id = "u1" or fact:"tea" (see docs/memory-bank.md).', placeholder: 'scope.user_id = "u1"' },
      columns: [['memory', (m) => link(m.name, m.name.split('/').pop())], ['fact', (m) => m.fact ?? ''], ['scope', (m) => json(m.scope)], ['topics', (m) => json(m.topics)], ['expires', (m) => m.expireTime ?? '—'], ['updated', (m) => m.updateTime ?? '']],
    }),
    pagedList({
      title: 'Sessions',
      path: `/v1beta1/${name}/sessions`,
      itemsKey: 'sessions',
      filter: { hint: 'AIP-160 over display_name, user_id, labels.<key>.', placeholder: 'user_id = "u1"' },
      columns: [['session', (s) => link(s.name, s.name.split('/').pop())], ['user', (s) => s.userId ?? ''], ['display name', (s) => s.displayName ?? ''], ['updated', (s) => s.updateTime ?? ''], ['expires', (s) => s.expireTime ?? '—']],
    }),
    // With force, as the corpora's pages delete theirs: without it an engine holding memories or sessions is refused.
    resource.ok ? deleteControl(name, delOp(withQuery(`/v1beta1/${name}`, { force: 'true' })), up(name), 'its memories with their revisions, its sessions with their events') : null,
  )
}

/** @type {View} */
export const memory = (main, name) =>
  show(main, `/v1beta1/${name}`, (m) => [
    heading(name, 'Memory'),
    facts([['fact', m.fact], ['scope', json(m.scope)], ['topics', json(m.topics)], ['expires', m.expireTime ?? '—'], ['created', m.createTime], ['updated', m.updateTime], ['engine', link(name.replace(/\/memories\/.*$/, ''))]]),
    pagedList({ title: 'Revisions', path: `/v1beta1/${name}/revisions`, itemsKey: 'memoryRevisions', columns: [['revision', (r) => h('code', {}, String(r.name).split('/').pop())], ['fact', (r) => r.fact ?? ''], ['created', (r) => r.createTime ?? ''], ['labels', (r) => json(r.labels)]] }),
    deleteControl(name, delOp(`/v1beta1/${name}`), up(name)),
  ])

/** @param {any} content */
function contentText(content) {
  return (content?.parts ?? []).map((/** @type {any} */ p) => (typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n')
}

/** @type {View} */
export const session = (main, name) =>
  show(main, `/v1beta1/${name}`, (s) => [
    heading(name, s.displayName || 'Session'),
    facts([['user', s.userId], ['state', json(s.sessionState)], ['expires', s.expireTime ?? '—'], ['updated', s.updateTime], ['engine', link(name.replace(/\/sessions\/.*$/, ''))]]),
    pagedList({
      title: 'Events',
      path: `/v1beta1/${name}/events`,
      itemsKey: 'sessionEvents',
      filter: { hint: 'AIP-160 on timestamp, e.g. timestamp >= "2026-03-01T10:00:00Z".', placeholder: 'timestamp >= "2026-01-01T00:00:00Z"' },
      columns: [['time', (e) => e.timestamp ?? ''], ['author', (e) => e.author ?? ''], ['content', (e) => h('p', { class: 'text' }, contentText(e.content))], ['invocation', (e) => e.invocationId ?? '']],
    }),
    deleteControl(name, delOp(`/v1beta1/${name}`), up(name)),
  ])
