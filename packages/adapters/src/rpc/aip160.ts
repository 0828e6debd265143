import { characterCount } from './limits.js'
import { invalidArgument } from './status.js'

/**
 * The AIP-160 filter subset Google's retrieval APIs take as a string (RAG Engine's
 * `metadataFilter`, Memory Bank's `filter`): comparisons `= != < <= > >=`, `:` (has: a list
 * contains a value, or `key:*` the key exists), `AND`, `OR`, `NOT` / `-`, parentheses, quoted
 * strings, numbers, `true` / `false`, and bare words as strings. As AIP-160 says, OR binds tighter
 * than AND (`a AND b OR c` is `a AND (b OR c)`) and terms side by side are ANDed.
 *
 * A filter is bounded before and while it is parsed: its length (`MAX_FILTER_LENGTH`) and its
 * nesting (`MAX_FILTER_DEPTH`), so neither the parser nor anything walking its tree (the printer,
 * the compiler to core filters, core's evaluation) recurses without bound.
 */

/**
 * Characters of a filter, at most: Google documents no limit for these fields; Cloud Logging, whose
 * filters are the same language, documents 20,000 (https://cloud.google.com/logging/quotas).
 */
export const MAX_FILTER_LENGTH = 20_000

/**
 * Nesting of a filter, at most: parentheses and NOT / - count one level each. Far above any
 * hand-written filter, and it keeps the tree (at most two and/or levels per parenthesis) within
 * core's own filter depth limit.
 */
export const MAX_FILTER_DEPTH = 32

export type Literal = { readonly t: 'string'; readonly v: string } | { readonly t: 'number'; readonly v: number } | { readonly t: 'bool'; readonly v: boolean }

export type Comparator = '=' | '!=' | '<' | '<=' | '>' | '>='

export type FilterExpr =
  | { readonly k: 'and'; readonly items: readonly FilterExpr[] }
  | { readonly k: 'or'; readonly items: readonly FilterExpr[] }
  | { readonly k: 'not'; readonly expr: FilterExpr }
  | { readonly k: 'cmp'; readonly field: string; readonly op: Comparator; readonly value: Literal }
  | { readonly k: 'has'; readonly field: string; readonly value: Literal | '*' }

type Token =
  | { readonly kind: 'word'; readonly text: string; readonly at: number }
  | { readonly kind: 'string'; readonly text: string; readonly at: number }
  | { readonly kind: 'number'; readonly value: number; readonly text: string; readonly at: number }
  | { readonly kind: 'op'; readonly text: string; readonly at: number }
  | { readonly kind: 'end'; readonly at: number }

const OPERATORS = ['<=', '>=', '!=', '=', '<', '>', ':', '(', ')', '-', '*']
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' }
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/
const WORD = /^(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|`[^`]+`)/

function fail(field: string, filter: string, at: number, message: string): Error {
  return invalidArgument(field, `invalid filter at position ${at + 1} (${JSON.stringify(filter.slice(Math.max(0, at - 10), at + 10))}): ${message}`)
}

function tokenize(filter: string, field: string): Token[] {
  const out: Token[] = []
  let i = 0
  while (i < filter.length) {
    const c = filter[i] as string
    if (/\s/.test(c)) {
      i++
      continue
    }
    if (c === '"' || c === "'") {
      let j = i + 1
      let text = ''
      while (j < filter.length && filter[j] !== c) {
        if (filter[j] === '\\' && j + 1 < filter.length) {
          const e = filter[j + 1] as string
          const hex = /^u[0-9a-fA-F]{4}/.exec(filter.slice(j + 1, j + 6))
          if (hex) {
            text += String.fromCharCode(Number.parseInt(hex[0].slice(1), 16))
            j += 6
            continue
          }
          text += ESCAPES[e] ?? e
          j += 2
          continue
        }
        text += filter[j]
        j++
      }
      if (j >= filter.length) throw fail(field, filter, i, `the string starting here has no closing ${c}.`)
      out.push({ kind: 'string', text, at: i })
      i = j + 1
      continue
    }
    const rest = filter.slice(i)
    const previous = out[out.length - 1]
    const valuePosition = previous?.kind === 'op' && ['=', '!=', '<', '<=', '>', '>=', ':'].includes(previous.text)
    const number = NUMBER.exec(rest)
    if (number && (c !== '-' || valuePosition)) {
      // A number run on into letters (0x7E2, 12abc) or past float64's range (1e999) is named as written.
      const written = number[0] + (/^[\w.]*/.exec(rest.slice(number[0].length))?.[0] ?? '')
      if (written !== number[0]) throw fail(field, filter, i, `${JSON.stringify(written)} is not a number: write numbers in decimal (2018, -1.5, 1e3), or quote a text value ("${written}").`)
      if (!Number.isFinite(Number(number[0]))) throw fail(field, filter, i, `${number[0]} is beyond the range of numbers (about ±1.8e308).`)
      out.push({ kind: 'number', value: Number(number[0]), text: number[0], at: i })
      i += number[0].length
      continue
    }
    const word = WORD.exec(rest)
    if (word) {
      out.push({ kind: 'word', text: word[0].startsWith('`') ? word[0].slice(1, -1) : word[0], at: i })
      i += word[0].length
      continue
    }
    const op = OPERATORS.find((o) => rest.startsWith(o))
    if (!op) throw fail(field, filter, i, `unexpected character ${JSON.stringify(c)}.`)
    out.push({ kind: 'op', text: op, at: i })
    i += op.length
  }
  out.push({ kind: 'end', at: filter.length })
  return out
}

/** Where the character after the first `n` characters (code points) starts, as a UTF-16 index. */
function offsetOf(s: string, n: number): number {
  let at = 0
  for (let i = 0; i < n && at < s.length; i++) {
    const c = s.charCodeAt(at)
    at += c >= 0xd800 && c <= 0xdbff && at + 1 < s.length ? 2 : 1
  }
  return at
}

/** Parses a filter string; errors are INVALID_ARGUMENT at `field`, naming the 1-based position. */
export function parseFilter(filter: string, field: string): FilterExpr {
  if (filter.length > MAX_FILTER_LENGTH) {
    const n = characterCount(filter)
    if (n > MAX_FILTER_LENGTH) {
      throw fail(field, filter, offsetOf(filter, MAX_FILTER_LENGTH), `a filter is at most ${MAX_FILTER_LENGTH.toLocaleString('en-US')} characters (Quarry's cap; Google documents none); this one has ${n.toLocaleString('en-US')}.`)
    }
  }
  const tokens = tokenize(filter, field)
  let pos = 0
  // Open parentheses and NOTs around the term being parsed: the parser's recursion, bounded.
  let depth = 0
  const enter = (t: Token): void => {
    if (++depth > MAX_FILTER_DEPTH) {
      throw fail(field, filter, t.at, `the filter nests deeper than ${MAX_FILTER_DEPTH} levels here (parentheses and NOT / - count one each); at most ${MAX_FILTER_DEPTH} (Quarry's cap; Google documents none).`)
    }
  }
  const peek = (): Token => tokens[pos] as Token
  const next = (): Token => tokens[pos++] as Token
  const isKeyword = (t: Token, word: string): boolean => t.kind === 'word' && t.text === word
  const startsTerm = (t: Token): boolean =>
    (t.kind === 'word' && t.text !== 'AND' && t.text !== 'OR') || (t.kind === 'op' && (t.text === '(' || t.text === '-'))

  const parseAnd = (): FilterExpr => {
    const items = [parseOr()]
    for (;;) {
      const t = peek()
      if (isKeyword(t, 'AND')) next()
      else if (!startsTerm(t)) break
      items.push(parseOr())
    }
    return items.length === 1 ? (items[0] as FilterExpr) : { k: 'and', items: items.flatMap((e) => (e.k === 'and' ? e.items : [e])) }
  }
  const parseOr = (): FilterExpr => {
    const items = [parseUnary()]
    while (isKeyword(peek(), 'OR')) {
      next()
      items.push(parseUnary())
    }
    return items.length === 1 ? (items[0] as FilterExpr) : { k: 'or', items: items.flatMap((e) => (e.k === 'or' ? e.items : [e])) }
  }
  const parseUnary = (): FilterExpr => {
    const t = peek()
    if (isKeyword(t, 'NOT') || (t.kind === 'op' && t.text === '-')) {
      enter(t)
      next()
      const expr: FilterExpr = { k: 'not', expr: parseUnary() }
      depth--
      return expr
    }
    if (t.kind === 'op' && t.text === '(') {
      enter(t)
      next()
      const inner = parseAnd()
      const close = next()
      if (close.kind !== 'op' || close.text !== ')') throw fail(field, filter, close.at, 'expected ")" to close the parenthesis.')
      depth--
      return inner
    }
    return parseComparison()
  }
  const parseValue = (): Literal => {
    const t = next()
    if (t.kind === 'string') return { t: 'string', v: t.text }
    if (t.kind === 'number') return { t: 'number', v: t.value }
    if (t.kind === 'word') {
      if (t.text === 'true' || t.text === 'false') return { t: 'bool', v: t.text === 'true' }
      return { t: 'string', v: t.text }
    }
    throw fail(field, filter, t.at, t.kind === 'end' ? 'the filter ends where a value is expected.' : `expected a value (a quoted string, a number, true or false), found "${t.text}".`)
  }
  const parseComparison = (): FilterExpr => {
    const f = next()
    if (f.kind !== 'word' || ['AND', 'OR', 'NOT'].includes(f.text)) {
      throw fail(field, filter, f.at, f.kind === 'end' ? 'the filter ends where a comparison is expected.' : `expected a field name, found "${'text' in f ? f.text : ''}".`)
    }
    const op = next()
    if (op.kind !== 'op' || !['=', '!=', '<', '<=', '>', '>=', ':'].includes(op.text)) {
      // "a = 1 and b = 2" reads `and` as a field: AIP-160's logical operators are capitals only.
      const capitals = ['AND', 'OR', 'NOT'].includes(f.text.toUpperCase()) ? ` AIP-160 writes its logical operators in capitals: ${f.text.toUpperCase()}, not ${f.text}.` : ''
      throw fail(field, filter, op.at, `expected an operator (=, !=, <, <=, >, >=, :) after "${f.text}".${capitals}`)
    }
    if (op.text === ':') {
      const t = peek()
      if (t.kind === 'op' && t.text === '*') {
        next()
        return { k: 'has', field: f.text, value: '*' }
      }
      return { k: 'has', field: f.text, value: parseValue() }
    }
    return { k: 'cmp', field: f.text, op: op.text as Comparator, value: parseValue() }
  }

  if (peek().kind === 'end') throw fail(field, filter, 0, 'the filter is empty.')
  const expr = parseAnd()
  const rest = peek()
  if (rest.kind !== 'end') throw fail(field, filter, rest.at, `unexpected "${'text' in rest ? rest.text : ''}" after a complete filter.`)
  return expr
}

/** A literal as a filter writes it (a string quoted). */
export function printLiteral(v: Literal): string {
  if (v.t === 'string') return JSON.stringify(v.v)
  return String(v.v)
}

function printField(field: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(field) && !['AND', 'OR', 'NOT', 'true', 'false'].includes(field) ? field : `\`${field}\``
}

/** Prints an expression so that `parseFilter(printFilter(e))` gives `e` back (compound operands in parentheses). */
export function printFilter(e: FilterExpr): string {
  const operand = (x: FilterExpr): string => (x.k === 'and' || x.k === 'or' ? `(${printFilter(x)})` : printFilter(x))
  switch (e.k) {
    case 'and':
      return e.items.map(operand).join(' AND ')
    case 'or':
      return e.items.map(operand).join(' OR ')
    case 'not':
      return `NOT ${operand(e.expr)}`
    case 'has':
      return `${printField(e.field)}:${e.value === '*' ? '*' : printLiteral(e.value)}`
    case 'cmp':
      return `${printField(e.field)} ${e.op} ${printLiteral(e.value)}`
  }
}
