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

/**
 * Analyzer.logUnits / takeUnitLog / learnUnits: the import worker hands the calling thread the
 * units its chunking read, so indexing the chunks there does not read them again. The oracle is
 * an Analyzer that reads everything itself.
 */
describe('Analyzer unit logs', () => {
  const texts = [
    'Dune: the spice must flow — Arrakis, 10,191 A.G.; see https://dune.example/spice?x=1 or mail paul@atreides.example.',
    "Naïve café owners can't stop; the spice-trade's worms (#shaihulud) don't sleep... 3rd time's the charm!",
    '',
    'Ünïcödé  tabs\tand\nnew lines, emoji 🌵 cactus, “quotes”, and the desert the desert the desert.',
  ]

  it('gives a learning Analyzer the tokens and terms it would read itself, without reading the units', () => {
    const reader = new Analyzer()
    reader.logUnits()
    const oracle = new Analyzer()
    const learner = new Analyzer()
    for (const text of texts) {
      reader.tokenOffsets(text)
      const log = reader.takeUnitLog()
      if (text === '') expect(log).toBeUndefined()
      else learner.learnUnits(structuredClone(log!))
    }
    // Nothing new since the last take.
    expect(reader.takeUnitLog()).toBeUndefined()
    for (const text of texts) {
      expect(learner.tokens(text)).toEqual(oracle.tokens(text))
      expect(learner.terms(text)).toEqual(oracle.terms(text))
    }
    expect(oracle.unitsAnalyzed).toBeGreaterThan(20)
    expect(learner.unitsAnalyzed).toBe(0)
  })

  it('logs each unit once, the first time it is read, and only once logging is on', () => {
    const reader = new Analyzer()
    reader.tokens('before logging starts')
    reader.logUnits()
    reader.tokens('before the desert')
    const log = reader.takeUnitLog()
    // "before" was read ahead of the log; "the" and "desert" are new.
    const learner = new Analyzer()
    learner.learnUnits(log!)
    learner.tokens('the desert')
    expect(learner.unitsAnalyzed).toBe(0)
    learner.tokens('before')
    expect(learner.unitsAnalyzed).toBe(1)
    reader.tokens('the desert before')
    expect(reader.takeUnitLog()).toBeUndefined()
  })

  it('ignores the log of an Analyzer with other options: its tokens could be other terms', () => {
    const reader = new Analyzer({ stem: false })
    reader.logUnits()
    reader.tokens('running deserts')
    const learner = new Analyzer()
    learner.learnUnits(reader.takeUnitLog()!)
    expect(learner.terms('running deserts')).toEqual(new Analyzer().terms('running deserts'))
    expect(learner.terms('running deserts')).not.toEqual(reader.terms('running deserts'))
    expect(learner.unitsAnalyzed).toBe(2)
  })
})
