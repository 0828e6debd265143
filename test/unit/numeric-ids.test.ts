import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { numericId } from '../../packages/adapters/src/rpc/operations.js'
import { runs } from '../support/runs.js'

/**
 * Vertex's numeric resource ids (corpora, files, sessions, operations): 19 digits, as Google's
 * are, and below 2^63, since a corpus's id is also the int64 `ragCorpusId`
 * (vertex_rag_data.proto, ImportRagFilesOperationMetadata; "string (int64 format)" in the REST
 * reference): one above it reached gRPC clients as a negative number.
 */
describe('numericId', () => {
  const INT64_MAX = 2n ** 63n - 1n
  const source = (chars: string) => (length: number) => chars.repeat(length).slice(0, length)

  it('is 19 digits without a leading zero, and fits an int64 from any source of [a-z0-9]', () => {
    // 'w' gives 9 in every place but the first, where it gives the largest first digit, 8 (before: nineteen nines, above 2^63).
    expect(numericId(source('w'))).toBe('8999999999999999999')
    expect(numericId(source('0'))).toBe('1888888888888888888')
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]{19}$/), (raw) => {
        const id = numericId(() => raw)
        expect(id).toMatch(/^[1-9]\d{18}$/)
        expect(BigInt(id) <= INT64_MAX).toBe(true)
      }),
      { numRuns: runs(500) },
    )
  })

  it('starts with each of 1 to 8', () => {
    const first = new Set([...'abcdefghijklmnopqrstuvwxyz0123456789'].map((c) => numericId(source(c))[0]))
    expect([...first].sort()).toEqual(['1', '2', '3', '4', '5', '6', '7', '8'])
  })
})
