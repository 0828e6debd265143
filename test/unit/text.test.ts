import fc from 'fast-check'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { Analyzer, chunkText, createHashingEmbedder, createIndex, loadIndex } from '@quarry/core'

describe('Analyzer', () => {
  it('tokenizes with wink-nlp, lowercases, folds accents, drops stop words and punctuation, stems (Porter2)', () => {
    const a = new Analyzer()
    expect(a.terms('The Café runners were RUNNING over boundary-layers!')).toEqual(['cafe', 'runner', 'run', 'boundari', 'layer'])
    expect(a.terms('Mail me@example.com or visit #quarry, 3.5 kg')).toEqual(['mail', 'me@example.com', 'visit', '#quarry', '3.5', 'kg'])
  })

  it('each step can be turned off', () => {
    const a = new Analyzer({ stem: false, stopWords: false, foldAccents: false, lowercase: false })
    expect(a.terms('The Café runners')).toEqual(['The', 'Café', 'runners'])
    expect(new Analyzer({ stopWords: ['runners'] }).terms('the runners ran')).toEqual(['the', 'ran'])
    expect(new Analyzer({ minLength: 3 }).terms('an ox ran far')).toEqual(['ran', 'far'])
  })

  it('the unicode tokenizer splits on anything but letters and digits', () => {
    expect(new Analyzer({ tokenizer: 'unicode' }).terms('Flow-separation at Mach 2.5; the nozzle’s lip')).toEqual(['flow', 'separ', 'mach', '2', '5', 'nozzl', 'lip'])
  })

  it('reads the words of every script with the default tokenizer: wink reads Latin-1 letters only', () => {
    const a = new Analyzer()
    // Each gave no term, or a cut one (tieng → "ti", "ng"; łódź → "od"; İstanbul → "stanbul"), before.
    const cases: [string, string[]][] = [
      ['Привет, мир', ['привет', 'мир']],
      ['Αθήνα 2004', ['αθηνα', '2004']],
      ['Tiếng Việt', ['tieng', 'viet']],
      ['Łódź miasto', ['łodz', 'miasto']],
      ['İstanbul', ['istanbul']],
      ['שלום עולם', ['שלום', 'עולם']],
      ['東京タワー', ['東京', '京タ', 'タワ', 'ワー']],
      // What wink covers stays wink's: contractions, e-mails, hashtags, accented Latin-1 words, hyphens.
      ["don't e-mail me@x.com #tag naïve café", ["n't", 'e-mail', 'me@x.com', '#tag', 'naiv', 'cafe']],
      ['Москва-2020 and café', ['москва', '-2020', 'cafe']],
      // Marks alone are no word: the emoji variation selector (U+FE0F) after ❤ and ✔ stays out.
      ['I ❤\uFE0F NY ✔\uFE0F', ['ny']],
    ]
    for (const [text, terms] of cases) expect(a.terms(text), text).toEqual(terms)
    // Nor do they count as tokens for chunking: the chunks are those of the text without them.
    expect(chunkText(a, 'a \u2764\uFE0F b \u2764\uFE0F c', { size: 2, overlap: 0 }).map((c) => c.text)).toEqual(['a \u2764\uFE0F b', 'c'])
    expect(new Analyzer({ foldAccents: false }).terms('I \u2764\uFE0F NY')).toEqual(['ny'])
    // The 'unicode' tokenizer reads the same words of those scripts.
    expect(new Analyzer({ tokenizer: 'unicode' }).terms('Привет, мир Tiếng Việt')).toEqual(a.terms('Привет, мир Tiếng Việt'))
    // And a search finds them: Łódź ranks the Polish record first (it had only "od" in common with "od mnie").
    const index = createIndex()
    index.addMany([
      { id: 'pl', text: 'Łódź miasto' },
      { id: 'od', text: 'od mnie' },
      { id: 'ru', text: 'Привет, мир' },
    ])
    expect(index.search({ text: 'Łódź' }).hits.map((h) => h.id)).toEqual(['pl'])
    expect(index.search({ text: 'мир' }).hits.map((h) => h.id)).toEqual(['ru'])
  })

  it('documents and queries analyze the same way', () => {
    const index = createIndex({ text: {} })
    index.add({ id: 'x', text: 'Supersonic flows over swept wings' })
    expect(index.search({ text: 'FLOW over a Swept WING' }).hits.map((h) => h.id)).toEqual(['x'])
  })
})

describe.each(['wink', 'unicode'] as const)('chunkText (%s tokens)', (tokenizer) => {
  const analyzer = new Analyzer({ tokenizer })
  it('keeps offsets: every chunk is the source slice it claims', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('alpha', 'beta', 'the', 'gamma,', 'delta.', '  ', '\n', 'x-y', 'Ünïcode', '3.14', 'a.b@c.io', '日本語'), { maxLength: 80 }), fc.integer({ min: 1, max: 12 }), fc.nat(11), (words, size, o) => {
        const overlap = Math.min(o, size - 1)
        const source = words.join(' ')
        const tokens = analyzer.tokens(source)
        const chunks = chunkText(analyzer, source, { size, overlap })
        for (const c of chunks) {
          expect(source.slice(c.start, c.end)).toBe(c.text)
          expect(c.tokens).toBeLessThanOrEqual(size)
          // From its first token's start to its last token's end, by the analyzer's tokens.
          expect(c.start).toBe(tokens[c.firstToken]?.start)
          expect(c.end).toBe(tokens[c.firstToken + c.tokens - 1]?.end)
          expect(c.tokens === size || c.firstToken + c.tokens === tokens.length).toBe(true)
        }
        // Consecutive chunks advance by size - overlap tokens and the last one reaches the end.
        chunks.forEach((c, i) => expect(c.firstToken).toBe(i * (size - overlap)))
        if (tokens.length > 0) expect(chunks.at(-1)?.end).toBe(tokens.at(-1)?.end)
        else expect(chunks).toEqual([])
      }),
    )
  })

  it('rejects an overlap that does not leave room to advance', () => {
    expect(() => chunkText(analyzer, 'a b c', { size: 2, overlap: 2 })).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION' }) as Error)
  })
})

describe('text indexes persist with their analyzer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-text-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('an index saved before otherScripts existed loads with it false: its terms and a query\'s still agree', () => {
    // test/support/retriever-v1/: a corpus index saved by cf058ce, long before the option.
    const saved = fileURLToPath(new URL('../support/retriever-v1/snapshot-000001/corpus-0', import.meta.url))
    const old = loadIndex(saved, { embedder: createHashingEmbedder({ dimensions: 16 }) })
    expect(old.options.text.analyzer.otherScripts).toBe(false)
    // And CJK runs whole (cjkBigrams came later still).
    expect(old.options.text.analyzer.cjkBigrams).toBe(false)
    expect(createIndex().options.text.analyzer.otherScripts).toBe(true)
    // false is wink's tokens alone, as such an index analyzed when it was saved.
    expect(new Analyzer({ otherScripts: false }).terms('Łódź miasto')).toEqual(['od', 'miasto'])
    old.save(join(dir, 'resaved'))
    expect(loadIndex(join(dir, 'resaved'), { embedder: createHashingEmbedder({ dimensions: 16 }) }).options.text.analyzer).toMatchObject({ otherScripts: false, cjkBigrams: false })
  })

  it('a reloaded index analyzes and scores exactly as the saved one', () => {
    const options = { text: { analyzer: { stem: false, stopWords: ['flow'] as string[], tokenizer: 'unicode' as const }, bm25: { k1: 0.9, b: 0.4 }, fields: { title: { boost: 2 } } } }
    const index = createIndex(options)
    const texts = ['Boundary layer flow on flat plates', 'Shock waves in supersonic flow', 'Heat transfer in laminar boundary layers', 'Flutter of swept wings']
    texts.forEach((t, i) => index.add({ id: `d${i}`, text: { title: t.split(' ')[0] as string, body: t }, metadata: { i } }))
    index.remove('d3')
    // Texts with no term (empty, only the stop word) are no documents of the field: N stays 3.
    index.add({ id: 'empty', text: '' })
    index.add({ id: 'stop', text: 'flow' })
    expect(index.textStats.documents).toBe(3)
    index.save(join(dir, 'a'))
    const loaded = loadIndex(join(dir, 'a'))
    expect(loaded.options).toEqual(index.options)
    expect(loaded.textStats).toEqual(index.textStats)
    for (const q of ['boundary layers', 'flow', 'supersonic shock', 'flutter wings', 'Heat']) {
      expect(loaded.search({ text: q, explain: true })).toEqual(index.search({ text: q, explain: true }))
    }
    expect(loaded.get('d1')?.text).toEqual({ title: 'Shock', body: texts[1] })
  })
})
