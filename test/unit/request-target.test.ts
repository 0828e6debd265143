import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { requestTarget } from '../../packages/adapters/src/http/request.js'
import { runs } from '../support/runs.js'

/**
 * requestTarget against its oracle, the URL parser the REST edge used for every request: the same
 * path (an encoded `:` read as `:`) and the same query parameters, for targets made of the
 * characters that skip the parser (`/`, letters, `:`, `@`, `'`...) and of those that need it
 * (`%`, `.` segments, `\`, `?`, `#`, spaces, non-ASCII).
 */
function oracle(raw: string): { path: string; query: [string, string][] } {
  const url = new URL(`http://localhost${raw.startsWith('/') ? raw : `/${raw}`}`)
  return { path: url.pathname.replace(/%3A/gi, ':'), query: [...url.searchParams] }
}

const plain = "abcXYZ019_-~!$&'()*+,;=:@/"
const hostile = `${plain}%.\\?#= "<>\`{}é\u0000`
const targetOf = (alphabet: string) => fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }).map((cs) => `/${cs.join('')}`)

describe('requestTarget', () => {
  it('reads a target as the URL parser does, and skips it for plain paths', () => {
    fc.assert(
      fc.property(fc.oneof(targetOf(plain), targetOf(hostile), fc.string()), (raw) => {
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
    expect([...(got.query ?? [])]).toEqual([['pageSize', '2'], ['alt', 'json'], ['pageSize', '3']])
    expect(requestTarget('/v1beta1/a/../b').path).toBe('/v1beta1/b')
  })
})
