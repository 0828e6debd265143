import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Analyzer, createIndex, loadIndex } from '@quarry/core'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runs } from '../support/runs.js'

/**
 * CJK text as overlapping pairs (text/cjk-bigrams.ts), as Lucene's CJKBigramFilter reads it,
 * against an oracle written by code point: the tokens of the same analyzer with runs whole, less
 * their CJK characters, plus each run's pairs.
 */
const CJK = /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]$/u

function oracle(text: string, options: { tokenizer: 'wink' | 'unicode' }): [number, number, string][] {
  const whole = new Analyzer({ ...options, cjkBigrams: false, stem: false, stopWords: false, lowercase: false, foldAccents: false })
  const out: [number, number, string][] = []
  // Code points with their offsets.
  const chars: { at: number; ch: string }[] = []
  for (let at = 0; at < text.length; ) {
    const ch = String.fromCodePoint(text.codePointAt(at) as number)
    chars.push({ at, ch })
    at += ch.length
  }
  // In a run: a CJK letter, or a CJK mark right after a character in a run (a mark after a Latin letter is that letter's).
  const cjkAt = new Set<number>()
  chars.forEach((c, i) => {
    const previous = chars[i - 1]
    if (CJK.test(c.ch) && (/^\p{L}$/u.test(c.ch) || (/^\p{M}$/u.test(c.ch) && previous !== undefined && cjkAt.has(previous.at)))) cjkAt.add(c.at)
  })
  for (const t of whole.tokens(text)) {
    // The token's pieces between CJK characters, kept when they hold a letter or digit.
    let piece = ''
    let start = t.start
    for (const c of chars.filter((c) => c.at >= t.start && c.at < t.end)) {
      if (cjkAt.has(c.at)) {
        if (/[\p{L}\p{N}]/u.test(piece)) out.push([start, start + piece.length, piece])
        piece = ''
        start = c.at + c.ch.length
      } else piece += c.ch
    }
    if (piece.length === t.end - t.start) out.push([t.start, t.end, t.term ?? piece])
    else if (/[\p{L}\p{N}]/u.test(piece)) out.push([start, start + piece.length, piece])
  }
  // Each maximal run of CJK letters: its pairs, or itself when one character long.
  for (let i = 0; i < chars.length; ) {
    if (!cjkAt.has((chars[i] as { at: number }).at)) {
      i++
      continue
    }
    let j = i
    while (j < chars.length && cjkAt.has((chars[j] as { at: number }).at)) j++
    // Characters as written: a mark or a Hangul vowel / final jamo joins the one before it.
    const run: { at: number; ch: string }[] = []
    for (const c of chars.slice(i, j)) {
      const cp = c.ch.codePointAt(0) as number
      const last = run[run.length - 1]
      if (last !== undefined && (/^\p{M}$/u.test(c.ch) || (cp >= 0x1160 && cp <= 0x11ff) || (cp >= 0xd7b0 && cp <= 0xd7ff))) run[run.length - 1] = { at: last.at, ch: last.ch + c.ch }
      else run.push(c)
    }
    const pairs = run.length === 1 ? [run] : run.slice(0, -1).map((c, k) => [c, run[k + 1] as { at: number; ch: string }])
    for (const p of pairs) out.push([(p[0] as { at: number }).at, (p[0] as { at: number }).at + p.map((c) => c.ch).join('').length, p.map((c) => c.ch).join('')])
    i = j
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1])
}

const pieces = fc.constantFrom('東京', 'タワー', 'は', '日本の首都', '北京是中国的首都', '한국어', '텍스트입니다', '𠀀', 'iPhone', '用', 'Paris', '2023', 'ー', '々', '。', '、', ' ', '-', "l'", 'e-mail', 'Łódź', 'мир', '!', 'a\u0323', 'か\u3099', '\u0323', '한국어'.normalize('NFD'), 'だいがく'.normalize('NFD'))

describe('CJK runs as overlapping pairs', () => {
  it('gives exactly these terms, with either tokenizer', () => {
    for (const tokenizer of ['wink', 'unicode'] as const) {
      const a = new Analyzer({ tokenizer })
      expect(a.terms('東京タワーは日本の首都。北京是中国的首都 한국어 텍스트입니다')).toEqual(['東京', '京タ', 'タワ', 'ワー', 'ーは', 'は日', '日本', '本の', 'の首', '首都', '北京', '京是', '是中', '中国', '国的', '的首', '首都', '한국', '국어', '텍스', '스트', '트입', '입니', '니다'].map((t) => t.normalize('NFD')))
      expect(a.terms('用')).toEqual(['用'])
    }
    // Decomposed text (NFD) pairs as composed text does: a document in NFD is found by a query in NFC.
    const nfd = createIndex({})
    nfd.add({ id: 'kr', text: '한국어 텍스트'.normalize('NFD') })
    nfd.add({ id: 'jp', text: 'だいがくに行く'.normalize('NFD') })
    expect(nfd.search({ text: '한국어' }).hits.map((h) => h.id)).toEqual(['kr'])
    expect(nfd.search({ text: 'だいがく' }).hits.map((h) => h.id)).toEqual(['jp'])
    // A run longer than maxTokenLength is read whole: its last pair is there.
    expect(new Analyzer({ maxTokenLength: 4 }).terms('東京タワーは日本').at(-1)).toBe('日本')
  })

  it('property: the tokens are the oracle\'s, offsets and values, with either tokenizer', () => {
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), fc.constantFrom('wink' as const, 'unicode' as const), (parts, tokenizer) => {
        const text = parts.join('')
        const a = new Analyzer({ tokenizer, stem: false, stopWords: false, lowercase: false, foldAccents: false })
        expect(a.tokens(text).map((t) => [t.start, t.end, t.term])).toEqual(oracle(text, { tokenizer }))
      }),
      { numRuns: runs(300) },
    )
  })

  it('property: a run longer than the 256 characters wink reads at once gives all its pairs, with either tokenizer', () => {
    // Letters only (no punctuation to cut at), composed and decomposed, one outside the BMP.
    const letters = fc.constantFrom('東', '京', 'タ', 'ワ', 'ー', 'は', '々', '𠀀', '한', '국', 'か\u3099', '한'.normalize('NFD'))
    const around = fc.array(pieces, { maxLength: 4 }).map((p) => p.join(''))
    fc.assert(
      fc.property(fc.array(letters, { minLength: 200, maxLength: 900 }), around, around, fc.constantFrom('wink' as const, 'unicode' as const), (run, before, after, tokenizer) => {
        const text = `${before} ${run.join('')} ${after}`
        const a = new Analyzer({ tokenizer, stem: false, stopWords: false, lowercase: false, foldAccents: false })
        expect(a.tokens(text).map((t) => [t.start, t.end, t.term])).toEqual(oracle(text, { tokenizer }))
      }),
      { numRuns: runs(100) },
    )
    // 600 distinct ideographs: 599 pairs, the last one the run's last two characters (wink had read the first 256).
    const long = Array.from({ length: 600 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('')
    for (const tokenizer of ['wink', 'unicode'] as const) {
      const terms = new Analyzer({ tokenizer }).terms(long)
      expect([terms.length, new Set(terms).size, terms.at(-1)]).toEqual([599, 599, long.slice(-2)])
    }
  })

  it('finds a word inside a clause, ranks by BM25 over pairs, and an index saved before the option loads with runs whole', () => {
    const index = createIndex({})
    index.add({ id: 'jp', text: '東京タワーは日本の首都にあります' })
    index.add({ id: 'cn', text: '北京是中国的首都' })
    index.add({ id: 'kr', text: '한국어 텍스트입니다' })
    expect(index.search({ text: '東京' }).hits.map((h) => h.id)).toEqual(['jp'])
    expect(index.search({ text: '텍스트' }).hits.map((h) => h.id)).toEqual(['kr'])
    // "首都" is in both; the shorter Chinese text ranks first (BM25's length normalization).
    expect(index.search({ text: '首都' }).hits.map((h) => h.id)).toEqual(['cn', 'jp'])
    const dir = mkdtempSync(join(tmpdir(), 'quarry-cjk-'))
    try {
      index.save(dir)
      expect(loadIndex(dir).search({ text: '東京' }).hits.map((h) => h.id)).toEqual(['jp'])
      expect(loadIndex(dir).options.text.analyzer.cjkBigrams).toBe(true)
      // An index saved before the option (text.test.ts: the retriever-v1 fixture) loads with runs whole, as it analyzed.
      expect(new Analyzer({ cjkBigrams: false }).terms('東京タワー')).toEqual(['東京タワー'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
