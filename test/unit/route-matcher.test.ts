import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '../../packages/core/src/index.js'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '../../packages/adapters/src/index.js'
import { bindMethods } from '../../packages/adapters/src/transport/bound-methods.js'
import { restRoutes, routeMatcher } from '../../packages/adapters/src/http/routes.js'
import { runs } from '../support/runs.js'

/**
 * routeMatcher against its oracle, a scan of every route's regex in table order: the same
 * routes, in the same order, for paths made from every template (variables filled with one or
 * more segments, `**` with several) and for those paths cut or extended by a segment.
 */
const embedder = createHashingEmbedder({ dimensions: 8 })
const routes = restRoutes(bindMethods({ semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }))
const match = routeMatcher(routes)
const oracle = (path: string): string[] => routes.filter((r) => r.compiled.regex.test(path)).map((r) => `${r.method} ${r.template}`)
const names = (found: readonly { method: string; template: string }[]): string[] => found.map((r) => `${r.method} ${r.template}`)

// Mostly plain ids; now and then one with a ":" (a custom verb's mark) or an empty one.
const segment = fc.oneof({ weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9-]{1,6}$/) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z:]{0,4}$/) })

/** A path the template matches: `*` one segment, `**` one to three. */
function fill(template: string, values: readonly string[]): string {
  let k = 0
  const next = (): string => values[k++ % values.length] as string
  return template.replace(/\{([^}=]+)(?:=([^}]*))?\}/g, (_all, _field: string, segments: string | undefined) =>
    (segments ?? '*')
      .split('/')
      .map((s) => (s === '**' ? [next(), next(), next()].slice(0, 1 + (k % 3)).join('/') : s === '*' ? next() : s))
      .join('/'),
  )
}

describe('routeMatcher', () => {
  it('finds what a scan of every route finds, in table order', () => {
    expect(routes.some((r) => r.template.includes('**'))).toBe(true)
    fc.assert(
      fc.property(fc.constantFrom(...routes), fc.array(segment, { minLength: 1, maxLength: 6 }), fc.constantFrom('as is', 'cut', 'extended'), (route, values, change) => {
        const made = fill(route.template, values)
        const path = change === 'cut' ? made.slice(0, made.lastIndexOf('/')) : change === 'extended' ? `${made}/${values[0] as string}` : made
        const expected = oracle(path)
        if (change === 'as is' && values.every((v) => /^[a-z0-9-]+$/.test(v))) expect(expected).toContain(`${route.method} ${route.template}`)
        expect(names(match(path))).toEqual(expected)
      }),
      { numRuns: runs(300) },
    )
  })

  it('answers the paths of a small read and a query as the scan does', () => {
    for (const path of ['/v1beta1/projects/p/locations/l/ragCorpora/1', '/v1beta/corpora/c:query', '/v1beta1/projects/p/locations/l/ragCorpora/1/operations/2', '/', '/v1beta1']) {
      expect(names(match(path)), path).toEqual(oracle(path))
    }
    expect(names(match('/v1beta1/projects/p/locations/l/ragCorpora/1'))).toContain('GET /v1beta1/{name=projects/*/locations/*/ragCorpora/*}')
  })

  it('remembers the routes of recent paths, and answers the same before and after it forgets them', () => {
    const fresh = routeMatcher(routes)
    // Two templates match it (PATCH's and GET / DELETE's): its routes are put in table order, once.
    const corpus = '/v1beta1/projects/p/locations/l/ragCorpora/1'
    const first = fresh(corpus)
    expect(fresh(corpus)).toBe(first)
    // More paths than are kept (1,024), each asked twice, then the first ones again.
    const paths = Array.from({ length: 1500 }, (_, i) => (i % 3 === 0 ? `/v1beta1/projects/p/locations/l/ragCorpora/${i}` : i % 3 === 1 ? `/v1beta1/projects/p/locations/l/ragCorpora/${i}/ragFiles/${i}` : `/v1beta/corpora/c${i}:query`))
    for (const path of [...paths, ...paths.slice(0, 50)]) {
      expect(names(fresh(path)), path).toEqual(oracle(path))
      expect(names(fresh(path)), path).toEqual(oracle(path))
    }
    // A path longer than those kept is answered as well.
    const long = `/v1beta1/projects/${'p'.repeat(600)}/locations/l/ragCorpora/1`
    expect(names(fresh(long))).toEqual(oracle(long))
    expect(names(fresh(long))).toEqual(oracle(long))
  })
})
