import { describe, expect, it } from 'vitest'
import { QuarryError } from '@quarry/core'
import { createServer } from '@quarry/adapters'

// createServer refuses what it does not know, as core's createIndex does: from JavaScript, a
// misspelt option (`data` for `dataDir`) was ignored, and the server kept its state in memory.
describe('createServer options', () => {
  it('refuses an option it does not know, naming it and the known ones (a misspelt dataDir is no server in memory)', () => {
    let caught: unknown
    try {
      createServer({ data: '/tmp/x', console: false } as never)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(QuarryError)
    expect(caught).toMatchObject({ code: 'INVALID_OPTION', path: 'data' })
    expect((caught as Error).message).toMatch(/^unknown option data; known options are embedder, .*\bdataDir\b.*\bconsole\.$/)
  })
})
