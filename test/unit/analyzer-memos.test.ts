import { describe, expect, it } from 'vitest'
import { Analyzer } from '@quarry/core'

/** Analyzer.forgetMemos: what it memoized is read again, into the same tokens and terms. */
describe('Analyzer.forgetMemos', () => {
  it('reads a text again after forgetting, with the same tokens', () => {
    const analyzer = new Analyzer()
    const text = 'The desert wind erases tracks; the desert keeps none of them.'
    const first = analyzer.tokens(text)
    const analyzed = analyzer.unitsAnalyzed
    expect(analyzed).toBeGreaterThan(0)
    // Memoized: the same text again reads no unit.
    expect(analyzer.tokens(text)).toEqual(first)
    expect(analyzer.unitsAnalyzed).toBe(analyzed)
    analyzer.forgetMemos()
    expect(analyzer.tokens(text)).toEqual(first)
    expect(analyzer.unitsAnalyzed).toBe(2 * analyzed)
  })
})
