import { invalidArgument } from './status.js'

/**
 * The AIP-160 filter subset Google's retrieval APIs take as a string (RAG Engine's
 * `metadataFilter`, Memory Bank's `filter`): comparisons `= != < <= > >=`, `:` (has: a list
 * contains a value, or `key:*` the key exists), `AND`, `OR`, `NOT` / `-`, parentheses, quoted
 * strings, numbers, `true` / `false`, and bare words as strings. As AIP-160 says, OR binds tighter
 * than AND (`a AND b OR c` is `a AND (b OR c)`) and terms side by side are ANDed.
 */
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

/** Parses a filter string; errors are INVALID_ARGUMENT at `field`, naming the 1-based position. */
export function parseFilter(filter: string, field: string): FilterExpr {
  const tokens = tokenize(filter, field)
  let pos = 0
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
      next()
      return { k: 'not', expr: parseUnary() }
    }
    if (t.kind === 'op' && t.text === '(') {
      next()
      const inner = parseAnd()
      const close = next()
      if (close.kind !== 'op' || close.text !== ')') throw fail(field, filter, close.at, 'expected ")" to close the parenthesis.')
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
      throw fail(field, filter, op.at, `expected an operator (=, !=, <, <=, >, >=, :) after "${f.text}".`)
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

function printLiteral(v: Literal): string {
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
