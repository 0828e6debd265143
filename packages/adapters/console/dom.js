// @ts-check
// Small DOM builders: elements from data, never from HTML strings (so no text is ever markup).

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Record<string, string | number | boolean | undefined | ((event: any) => void)>} Props */

let ids = 0
/** A fresh element id for label/for pairs. @param {string} prefix */
export function uid(prefix) {
  ids += 1
  return `${prefix}-${ids}`
}

/**
 * An element with attributes (`on…` keys become listeners) and children.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props} [props]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag)
  for (const [key, value] of Object.entries(props)) {
    if (typeof value === 'function') element.addEventListener(key.slice(2).toLowerCase(), value)
    else if (value === true) element.setAttribute(key, '')
    else if (value !== false && value !== undefined) element.setAttribute(key, String(value))
  }
  append(element, children)
  return element
}

/**
 * @param {Element} element
 * @param {(Child | Child[])[]} children
 */
function append(element, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    element.append(typeof child === 'number' ? String(child) : child)
  }
}

/**
 * Replaces an element's children.
 * @param {Element} element
 * @param {...(Child | Child[])} children
 */
export function fill(element, ...children) {
  element.replaceChildren()
  append(element, children)
}

/**
 * The API's error, inline, in its own words.
 * @param {import('./api.js').ApiError} error
 */
export function errorBox(error) {
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, `${error.status || 'ERROR'} (${error.code}): `), error.message)
}

/**
 * A labelled control: the label names it by `for`.
 * @param {string} text
 * @param {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} control
 * @param {string} [hint]
 */
export function field(text, control, hint) {
  if (!control.id) control.id = uid('f')
  const hintId = hint ? `${control.id}-hint` : undefined
  if (hintId) control.setAttribute('aria-describedby', hintId)
  return h('div', { class: 'field' }, h('label', { for: control.id }, text), control, hint ? h('small', { id: hintId, class: 'hint' }, hint) : null)
}

/**
 * A table of rows: columns as [header, cell of a row].
 * @template T
 * @param {string} caption
 * @param {[string, (row: T) => Child | Child[]][]} columns
 * @param {readonly T[]} rows
 */
export function table(caption, columns, rows) {
  if (rows.length === 0) return h('p', { class: 'empty' }, `${caption}: none.`)
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, columns.map(([name]) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, rows.map((row) => h('tr', {}, columns.map(([, cell]) => h('td', {}, cell(row)))))),
    ),
  )
}

/**
 * A link inside the console to a resource's page.
 * @param {string} name resource name
 * @param {string} [text]
 */
export function link(name, text) {
  return h('a', { href: `#/${name}` }, text ?? name)
}

/**
 * Copies text, with the old selection-based copy where the Clipboard API is refused.
 * @param {string} text
 * @returns {Promise<boolean>}
 */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const area = h('textarea', { class: 'offscreen', readonly: true, 'aria-hidden': 'true' })
    area.value = text
    document.body.append(area)
    area.select()
    const done = document.execCommand('copy')
    area.remove()
    return done
  }
}

/**
 * A code block with a Copy button.
 * @param {string} title
 * @param {string} code
 */
export function copyBlock(title, code) {
  const status = h('span', { class: 'copied', role: 'status' })
  const button = h('button', { type: 'button', onclick: async () => (status.textContent = (await copyText(code)) ? 'Copied.' : 'Copy failed: select the text.') }, `Copy ${title}`)
  return h('figure', { class: 'code' }, h('figcaption', {}, title, ' ', button, ' ', status), h('pre', { tabindex: 0 }, h('code', {}, code)))
}

/**
 * A Delete button with a confirm step; `run` answers an error or nothing.
 * @param {string} name what is deleted
 * @param {() => Promise<import('./api.js').Answer>} run
 * @param {() => void} done
 * @param {string} [what] what "everything under it" is, when the page can say more than that
 */
export function deleteControl(name, run, done, what) {
  const box = h('div', { class: 'danger' })
  const ask = () => {
    const confirm = h('button', { type: 'button', class: 'bad', onclick: async () => {
      confirm.disabled = true
      const answer = await run()
      if (answer.ok) done()
      else fill(box, errorBox(answer.error), start())
    } }, `Confirm: delete ${name}`)
    fill(box, h('p', {}, `Delete ${name} and everything under it${what ? ` (${what})` : ''}? This cannot be undone.`), confirm, ' ', h('button', { type: 'button', onclick: () => fill(box, start()) }, 'Cancel'))
    confirm.focus()
  }
  const start = () => h('button', { type: 'button', class: 'bad', onclick: ask }, 'Delete…')
  fill(box, start())
  return box
}

/**
 * Text with character ranges marked.
 * @param {string} text
 * @param {readonly (readonly number[])[]} ranges [start, end) pairs
 */
export function marked(text, ranges) {
  const sorted = [...ranges].filter((r) => r.length >= 2).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0))
  /** @type {(Node | string)[]} */
  const out = []
  let at = 0
  for (const range of sorted) {
    const start = Math.max(at, range[0] ?? 0)
    const end = Math.min(text.length, range[1] ?? 0)
    if (end <= start) continue
    out.push(text.slice(at, start), h('mark', {}, text.slice(start, end)))
    at = end
  }
  out.push(text.slice(at))
  return h('p', { class: 'text' }, out)
}

/**
 * A number as shown: up to 6 significant digits.
 * @param {unknown} value
 */
export function num(value) {
  return typeof value === 'number' ? String(Number(value.toPrecision(6))) : value === undefined ? '—' : String(value)
}
