// @ts-check
// The console's entry: a hash router (#/<resource name>) over the views, and live updates of the
// start page from /console/api/events (polling when the stream fails).
import { fill, h } from './dom.js'
import { renderOverview } from './overview.js'
import { engine, memory, ragCorpus, ragFile, session, srCorpus, srDocument } from './resources.js'

const SEG = '[^/]+'
const LOCATION = `projects/${SEG}/locations/${SEG}`
/** @type {[RegExp, import('./resources.js').View][]} the route table: a resource name's shape → its page */
const ROUTES = [
  [new RegExp(`^corpora/${SEG}$`), srCorpus],
  [new RegExp(`^corpora/${SEG}/documents/${SEG}$`), srDocument],
  [new RegExp(`^${LOCATION}/ragCorpora/${SEG}$`), ragCorpus],
  [new RegExp(`^${LOCATION}/ragCorpora/${SEG}/ragFiles/${SEG}$`), ragFile],
  [new RegExp(`^${LOCATION}/reasoningEngines/${SEG}$`), engine],
  [new RegExp(`^${LOCATION}/reasoningEngines/${SEG}/memories/${SEG}$`), memory],
  [new RegExp(`^${LOCATION}/reasoningEngines/${SEG}/sessions/${SEG}$`), session],
]

const main = /** @type {HTMLElement} */ (document.getElementById('main'))
const crumbs = /** @type {HTMLElement} */ (document.getElementById('crumbs'))
const live = /** @type {HTMLElement} */ (document.getElementById('live'))

/** The generation the start page shows; undefined elsewhere. @type {number | undefined} */
let shown
let onOverview = false

/** Breadcrumbs: each ancestor that has a page of its own. @param {string} name */
function breadcrumbs(name) {
  const parts = name.split('/')
  /** @type {HTMLElement[]} */
  const items = [h('li', {}, h('a', { href: '#/' }, 'Overview'))]
  for (let i = 2; i <= parts.length; i += 2) {
    const prefix = parts.slice(0, i).join('/')
    if (!ROUTES.some(([pattern]) => pattern.test(prefix))) continue
    const label = `${parts[i - 2]}/${parts[i - 1]}`
    items.push(h('li', {}, i === parts.length ? h('span', { 'aria-current': 'page' }, label) : h('a', { href: `#/${prefix}` }, label)))
  }
  fill(crumbs, h('ol', {}, items))
}

/**
 * The address's resource name with its percent escapes decoded; undefined for a malformed escape
 * (`%E0%A4`), which names no resource (decodeURIComponent throws on it).
 * @param {string} text
 */
function decoded(text) {
  try {
    return decodeURIComponent(text).replace(/\/+$/, '')
  } catch {
    return undefined
  }
}

/** @param {string} name what the address asked for */
function notFound(name) {
  fill(main, h('h1', {}, 'Not found'), h('p', {}, `No page for "${name}". `, h('a', { href: '#/' }, 'Back to the overview')))
}

async function route() {
  const hash = location.hash
  if (hash !== '' && !hash.startsWith('#/')) return // in-page anchors such as the skip link
  const name = decoded(hash.slice(2))
  if (name === undefined) {
    onOverview = false
    breadcrumbs('')
    document.title = 'Not found · Quarry console'
    return notFound(hash.slice(2))
  }
  breadcrumbs(name)
  onOverview = name === ''
  if (onOverview) {
    document.title = 'Overview · Quarry console'
    shown = await renderOverview(main)
    return
  }
  document.title = `${name} · Quarry console`
  const view = ROUTES.find(([pattern]) => pattern.test(name))?.[1]
  if (!view) return notFound(name)
  fill(main, h('p', { class: 'muted' }, 'Loading…'))
  await view(main, name)
}

/** A new generation: refresh the start page if it is showing an older one. @param {number} generation */
async function changed(generation) {
  if (onOverview && shown !== undefined && generation !== shown) shown = await renderOverview(main, { refresh: true })
}

/** Live updates: the event stream, or polling every 2 s when it fails. */
function watch() {
  const events = new EventSource('/console/api/events')
  events.addEventListener('generation', (event) => {
    live.textContent = 'Live'
    const data = JSON.parse(/** @type {MessageEvent} */ (event).data)
    void changed(Number(data.generation))
  })
  events.addEventListener('error', () => {
    if (events.readyState !== EventSource.CLOSED) return // the browser reconnects by itself
    live.textContent = 'Polling'
    const timer = setInterval(async () => {
      if (!onOverview) return
      const response = await fetch('/console/api/overview').catch(() => undefined)
      if (response?.ok) return void changed(Number((await response.json()).generation))
      clearInterval(timer) // no overview to poll either: the page says so when shown
      live.textContent = ''
    }, 2000)
  })
}

window.addEventListener('hashchange', () => void route())
void route()
watch()
