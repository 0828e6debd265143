import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { requestTarget } from '../../packages/adapters/src/http/request.js'
import { runs } from '../support/runs.js'

/**
 * requestTarget against its oracle, the URL parser the REST edge used for every request: the same
 * path (an encoded `:` read as `:`) and the same query parameters (grouped by name, as a
 * request's fields take them), for targets made of the characters that skip the parser (`/`,
 * letters, `:`, `@`, `'`...) and of those that need it (`%`, `.` segments, `\`, `?`, `#`, spaces,
 * non-ASCII), and query strings plain or not.
 */
function oracle(raw: string): { path: string; query: [string, string[]][] } {
  const url = new URL(`http://localhost${raw.startsWith('/') ? raw : `/${raw}`}`)
  return { path: url.pathname.replace(/%3A/gi, ':'), query: grouped([...url.searchParams]) }
}

/** Parameters as requestTarget gives them: each name once, in the order names first came, with its values in order. */
function grouped(pairs: readonly [string, string][]): [string, string[]][] {
  const byName = new Map<string, string[]>()
  for (const [name, value] of pairs) byName.set(name, [...(byName.get(name) ?? []), value])
  return [...byName]
}

const plain = "abcXYZ019_-~!$&'()*+,;=:@/"
const hostile = `${plain}%.\\?#= "<>\`{}é\u0000`
const targetOf = (alphabet: string) => fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }).map((cs) => `/${cs.join('')}`)
// Query strings near the plain ones the parser is skipped for (`pageSize=5&pageToken=a-b_c`), and
// what makes them need it: `%`, `+`, an empty name, a missing `=`, `;`, `#`, a second `?`.
const queryText = (alphabet: string, maxLength: number) => fc.array(fc.constantFrom(...alphabet), { maxLength }).map((cs) => cs.join(''))
const pair = fc.tuple(queryText('aZ09_-.~%+;#?é ', 6), fc.constantFrom('=', '', '=='), queryText('aZ09_-.~=%+;é ', 6)).map(([name, eq, value]) => `${name}${eq}${value}`)
const withQuery = fc.tuple(targetOf(plain), fc.array(pair, { minLength: 1, maxLength: 4 })).map(([path, pairs]) => `${path}?${pairs.join('&')}`)

describe('requestTarget', () => {
  it('reads a target as the URL parser does, and skips it for plain paths', () => {
    fc.assert(
      fc.property(fc.oneof(targetOf(plain), targetOf(hostile), withQuery, fc.string()), (raw) => {
        const got = requestTarget(raw)
        expect({ path: got.path, query: [...(got.query ?? [])] }).toEqual(oracle(raw))
      }),
      { numRuns: runs(400) },
    )
  })

  it('makes no query object for a plain path, and keeps every parameter of a query string', () => {
    expect(requestTarget('/v1beta1/projects/p/locations/l/ragCorpora/1')).toEqual({ path: '/v1beta1/projects/p/locations/l/ragCorpora/1', query: undefined })
    const got = requestTarget('/v1beta/corpora/c%3Aquery?pageSize=2&alt=json&pageSize=3')
    expect(got.path).toBe('/v1beta/corpora/c:query')
    expect([...(got.query ?? [])]).toEqual([['pageSize', ['2', '3']], ['alt', ['json']]])
    expect(requestTarget('/v1beta1/a/../b').path).toBe('/v1beta1/b')
    expect([...(requestTarget('/v1/x/ragFiles?pageSize=5&pageToken=Ab-_9&alt=json').query ?? [])]).toEqual([['pageSize', ['5']], ['pageToken', ['Ab-_9']], ['alt', ['json']]])
    expect([...(requestTarget('/v1/x?a=1+2&b=%41').query ?? [])]).toEqual([['a', ['1 2']], ['b', ['A']]])
  })
})
