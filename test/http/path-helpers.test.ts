import { describe, expect, it } from 'vitest'
import { MemoryBankServiceClient, ReasoningEngineServiceClient, SessionServiceClient, VertexRagDataServiceClient, VertexRagServiceClient } from '@quarry/adapters'
import { aiplatform, localAuth } from './google-gax.js'

type Helper = (...args: string[]) => string

/**
 * The in-process clients' path helpers (rpc/path-templates.ts) against the same helpers of
 * Google's aiplatform v1beta1 clients, the oracle: every `…Path` and `match…From…Name` helper
 * Google's client of a service has, Quarry's client of it has too, and both give the same
 * answers. The five aiplatform classes share one set of helpers on their prototypes.
 */
describe("in-process clients' path helpers", () => {
  const pairs = [
    ['VertexRagServiceClient', VertexRagServiceClient, aiplatform.v1beta1.VertexRagServiceClient],
    ['VertexRagDataServiceClient', VertexRagDataServiceClient, aiplatform.v1beta1.VertexRagDataServiceClient],
    ['MemoryBankServiceClient', MemoryBankServiceClient, aiplatform.v1beta1.MemoryBankServiceClient],
    ['SessionServiceClient', SessionServiceClient, aiplatform.v1beta1.SessionServiceClient],
    ['ReasoningEngineServiceClient', ReasoningEngineServiceClient, aiplatform.v1beta1.ReasoningEngineServiceClient],
  ] as const

  for (const [name, Quarry, Google] of pairs) {
    it(`${name}: every helper of Google's client, with the same answers`, () => {
      // Constructed without a call: Google's client connects on its first request only.
      const google = new Google({ authClient: localAuth(), apiEndpoint: '127.0.0.1', port: 1, fallback: true }) as unknown as Record<string, Helper>
      const ours = Quarry.prototype as unknown as Record<string, Helper | undefined>
      const renders = Object.getOwnPropertyNames(Object.getPrototypeOf(google)).filter((key) => /^[a-z]\w*Path$/.test(key) && key !== 'getProjectId')
      expect(renders.length).toBeGreaterThan(20)
      for (const render of renders) {
        const googleRender = google[render] as Helper
        const ids = Array.from({ length: googleRender.length }, (_, i) => `id-${i}`)
        const path = googleRender.apply(google, ids)
        expect([render, ours[render]?.(...ids)]).toEqual([render, path])
        const resource = render.slice(0, -'Path'.length)
        const matchers = Object.getOwnPropertyNames(Object.getPrototypeOf(google)).filter((key) => key.startsWith('match') && key.toLowerCase().endsWith(`from${resource.toLowerCase()}name`))
        expect(matchers.length).toBe(ids.length)
        for (const matcher of matchers) expect([matcher, ours[matcher]?.(path)]).toEqual([matcher, (google[matcher] as Helper).call(google, path)])
      }
    })
  }

  it('shares one set of helpers across the five classes', () => {
    const helpers = (cls: { prototype: object }): unknown[] => ['ragCorpusPath', 'memoryPath', 'matchRagFileFromRagFileName'].map((key) => (cls.prototype as Record<string, unknown>)[key])
    for (const [, Quarry] of pairs) expect(helpers(Quarry)).toEqual(helpers(VertexRagServiceClient))
  })
})
