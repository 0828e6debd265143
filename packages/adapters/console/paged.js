// @ts-check
// A list method's pages in a table: the API's pageToken, its filter syntax, its errors inline.
import { get } from './api.js'
import { errorBox, field, fill, h, table } from './dom.js'

/**
 * @typedef {object} PagedOptions
 * @property {string} title heading of the section
 * @property {string} path the list method's REST path
 * @property {string} itemsKey the answer's list field (e.g. "documents")
 * @property {[string, (row: any) => import('./dom.js').Child | import('./dom.js').Child[]][]} columns
 * @property {{ hint: string, placeholder?: string }} [filter] the API's `filter` parameter, when it has one
 * @property {number} [pageSize]
 * @property {Record<string, string>} [query] further query parameters of every page's call (e.g. the console's `name`)
 */

/**
 * A section listing one page at a time, with "Next page" while the API gives a nextPageToken.
 * @param {PagedOptions} options
 */
export function pagedList(options) {
  const results = h('div', { class: 'results', 'aria-live': 'polite' })
  const headingId = `h-${options.itemsKey}-${Math.random().toString(36).slice(2, 8)}`
  const filterInput = options.filter ? h('input', { type: 'text', name: 'filter', placeholder: options.filter.placeholder ?? '', autocomplete: 'off', spellcheck: 'false' }) : undefined
  /** @type {string[]} */
  const tokens = []
  /** @param {string | undefined} token */
  const load = async (token) => {
    fill(results, h('p', { class: 'muted' }, 'Loading…'))
    const answer = await get(options.path, { ...options.query, pageSize: String(options.pageSize ?? 20), pageToken: token, filter: filterInput?.value.trim() })
    if (!answer.ok) return fill(results, errorBox(answer.error))
    const rows = answer.json[options.itemsKey] ?? []
    const next = answer.json.nextPageToken
    const page = tokens.length + 1
    fill(
      results,
      table(options.title, options.columns, rows),
      h(
        'div',
        { class: 'pager' },
        h('span', { class: 'muted' }, `Page ${page}, ${rows.length} shown`),
        tokens.length > 0 ? h('button', { type: 'button', onclick: () => { tokens.length = 0; void load(undefined) } }, 'First page') : null,
        next ? h('button', { type: 'button', onclick: () => { tokens.push(next); void load(next) } }, 'Next page') : null,
      ),
    )
  }
  const form = filterInput
    ? h(
        'form',
        { class: 'inline', role: 'search', 'aria-label': `${options.title}: filter`, onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); tokens.length = 0; void load(undefined) } },
        field(`Filter ${options.title.toLowerCase()}`, filterInput, options.filter?.hint),
        h('button', { type: 'submit' }, 'Apply filter'),
      )
    : null
  void load(undefined)
  return h('section', { 'aria-labelledby': headingId }, h('h2', { id: headingId }, options.title), form, results)
}
