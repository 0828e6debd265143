import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { Analyzer, chunkText, chunkTokenized, createIndex, PreparedText, type QuarryIndex, type TextInput } from '@quarry/core'
import { runs } from '../support/runs.js'

// QuarryIndex.prepareText analyzes a record's text ahead of its add (the RAG adapter's uploads
// analyze while the import worker embeds). The oracle is the same index fed the plain text: the
// same ids, order and scores for text and hybrid queries, the same text statistics and vocabulary
// (terms are numbered at the add, whatever the order of preparing), the same snapshot byte for
// byte; a text prepared and never added leaves no trace.

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const words = fc.constantFrom('flow', 'flows', 'Flowing', 'boundary', 'layer', 'the', 'of', 'shock', "isn't", '3.5', 'me@x.org', 'x-ray', 'Mach', 'U.S.', 'naïve', 'café', 'wave,', 'heat', 'transfer')
const field = fc.array(words, { minLength: 0, maxLength: 10 }).map((ws) => ws.join(' '))
const text: fc.Arbitrary<TextInput> = fc.oneof(field, fc.record({ title: field, body: field }))
const vector = fc.array(fc.float({ min: -1, max: 1, noNaN: true, noDefaultInfinity: true }), { minLength: 4, maxLength: 4 }).filter((v) => v.some((x) => Math.abs(x) > 1e-3))
/** add-or-replace (id, text, vector), or remove id. */
const op = fc.oneof(fc.tuple(fc.integer({ min: 0, max: 15 }), text, vector), fc.tuple(fc.integer({ min: 0, max: 15 }), fc.constant(undefined), fc.constant(undefined)))

function twins(): [QuarryIndex, QuarryIndex] {
  const options = { dimensions: 4, metric: 'cosine' as const, dense: 'exact' as const, text: { fields: { title: { boost: 2 } } } }
  return [createIndex(options), createIndex(options)]
}

function answers(index: QuarryIndex, queries: readonly string[]): unknown[] {
  return queries.flatMap((q) => [index.search({ text: q, topK: 8 }).hits, index.search({ text: q, vector: [0.5, -0.2, 0.1, 0.9], topK: 8 }).hits])
}

/** `index` holds what `oracle` (fed plain text) holds: text statistics, vocabulary (term numbers), records, and answers. */
function expectSameAs(index: QuarryIndex, oracle: QuarryIndex, queries: readonly string[]): void {
  expect(index.textStats).toEqual(oracle.textStats)
  expect(index.state.sparse.terms).toEqual(oracle.state.sparse.terms)
  expect([...index.ids()].map((id) => index.get(id))).toEqual([...oracle.ids()].map((id) => oracle.get(id)))
  expect(answers(index, queries)).toEqual(answers(oracle, queries))
}

describe('text prepared ahead (prepareText)', () => {
  it('gives the records plain text gives: same hits and scores, same text statistics, prepared in any order', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 30 }), fc.array(fc.array(words, { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')), { minLength: 1, maxLength: 4 }), fc.boolean(), (ops, queries, reversed) => {
        const [plain, prepared] = twins()
        // Every text is prepared before any is added (reversed: in the opposite order, so new terms are numbered differently).
        const order = ops.map((_, i) => i)
        const ahead = new Map<number, PreparedText>()
        for (const i of reversed ? order.reverse() : order) {
          const t = (ops[i] as (typeof ops)[number])[1]
          if (t !== undefined) ahead.set(i, prepared.prepareText(t))
        }
        ops.forEach(([id, t, v], i) => {
          if (t === undefined) return expect(prepared.remove(String(id))).toBe(plain.remove(String(id)))
          plain.upsert({ id: String(id), text: t, vector: v as number[] })
          prepared.upsert({ id: String(id), text: ahead.get(i) as PreparedText, vector: v as number[] })
        })
        // Term numbers follow the adds, whatever the order of preparing: the same vocabulary.
        expectSameAs(prepared, plain, queries)
      }),
      { numRuns: runs(150) },
    )
  })

  it('with the tokens of the Analyzer that chunked the text (tokensFrom): the same records, and no unit read twice', () => {
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 8 }), fc.array(fc.array(words, { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')), { minLength: 1, maxLength: 4 }), (parts, size, queries) => {
        const source = parts.join('\n\n')
        const chunker = new Analyzer()
        // Chunks start and end mid-unit ("(wave," cut after "wave"): the chunker has not read those pieces.
        const chunks = chunkText(chunker, source, { size, overlap: size > 1 ? 1 : 0 }).map((c) => c.text)
        const [plain, prepared] = twins()
        const other = new Analyzer({ stem: false })
        other.tokens(source)
        const ignored = createIndex({ dimensions: 4, metric: 'cosine', dense: 'exact', text: { fields: { title: { boost: 2 } } } })
        chunks.forEach((t, i) => {
          const record = { id: `c${i}`, vector: [1, i, 0, -1] }
          plain.add({ ...record, text: t })
          prepared.add({ ...record, text: prepared.prepareText(t, { tokensFrom: chunker }) })
          // An Analyzer with other options is not read from.
          ignored.add({ ...record, text: ignored.prepareText(t, { tokensFrom: other }) })
        })
        // Only the pieces of units a chunk boundary cut are read by the index's analyzer (before any query is); whole units come from the chunker.
        const cut = new Set(chunks.flatMap((t) => t.split(/\s+/).filter((u, j, us) => u !== '' && (j === 0 || j === us.length - 1))))
        expect(prepared.state.analyzer.unitsAnalyzed).toBeLessThanOrEqual(cut.size)
        expect(ignored.state.analyzer.unitsAnalyzed).toBe(plain.state.analyzer.unitsAnalyzed)
        for (const index of [prepared, ignored]) {
          expect(index.textStats).toEqual(plain.textStats)
          expect(index.state.sparse.terms).toEqual(plain.state.sparse.terms)
          expect(answers(index, queries)).toEqual(answers(plain, queries))
        }
      }),
      { numRuns: runs(150) },
    )
  })

  // Runs over wink's 256-character bound are cut at punctuation from the run's start, so a part
  // starting mid-run would cut them elsewhere: the parts' two end runs are read as text.
  const longRun = fc.constantFrom(`${'ab,'.repeat(100)}cd`, `x${'y'.repeat(300)}.z`, `https://e.org/${'p/'.repeat(140)}q`)
  const piece = fc.oneof({ weight: 6, arbitrary: words }, { weight: 1, arbitrary: longRun }, { weight: 2, arbitrary: fc.constantFrom('(wave', 'flow)', '"heat"', '--', '...', '😀x', 'a\u00a0b') })
  const gap = fc.constantFrom(' ', '  ', '\n', '\n\n', '\t', '\u00a0', ' \u2009', '')

  it('within the tokens of the text it is part of: the records of plain text, and only the end runs read', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, gap), { minLength: 1, maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.nat())), fc.integer({ min: 1, max: 8 }), fc.array(fc.array(words, { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')), { minLength: 1, maxLength: 4 }), (pieces, cuts, size, queries) => {
        const source = pieces.map(([p, g]) => p + g).join('')
        const chunker = new Analyzer()
        const tokenized = chunker.tokenized(source)
        const overlap = size > 1 ? 1 : 0
        // The same chunks as chunkText, and the same tokens as tokens().
        const chunks = chunkTokenized(tokenized, { size, overlap })
        expect(chunks).toEqual(chunkText(new Analyzer(), source, { size, overlap }))
        expect(new Analyzer().tokens(source)).toEqual([...tokenized.ids].map((id, i) => ({ term: id < 0 ? null : chunker.tokenTermOf(id), start: tokenized.offsets[2 * i], end: tokenized.offsets[2 * i + 1] })))
        // The chunks, the chunks widened to the text's start and end (as the RAG adapter's are), and parts cut anywhere.
        const parts = [
          ...chunks.map((c) => ({ start: c.start, end: c.end })),
          { start: 0, end: source.length },
          ...cuts.map(([a, b]) => ({ start: Math.min(a, b) % (source.length + 1), end: Math.max(a, b) % (source.length + 1) })).map(({ start, end }) => ({ start, end: Math.max(start, end) })),
        ].filter((p) => p.end > p.start && source.slice(p.start, p.end).trim() !== '')
        const [plain, prepared] = twins()
        // A second index counting from the same tokens in turn with the first (the tokens' analyzer translates its ids for
        // one index at a time), whose own term ids differ: it holds another record first.
        const [alternatePlain, alternate] = twins()
        for (const index of [alternatePlain, alternate]) index.add({ id: 'first', vector: [0, 0, 1, 1], text: 'quokka zebra shock waves' })
        const other = new Analyzer({ stem: false })
        const ignored = createIndex({ dimensions: 4, metric: 'cosine', dense: 'exact', text: { fields: { title: { boost: 2 } } } })
        parts.forEach(({ start, end }, i) => {
          const t = source.slice(start, end)
          const record = { id: `p${i}`, vector: [1, i, 0, -1] }
          plain.add({ ...record, text: t })
          prepared.add({ ...record, text: prepared.prepareText(t, { within: { tokens: tokenized, start } }) })
          alternate.add({ ...record, text: alternate.prepareText(t, { within: { tokens: tokenized, start } }) })
          alternatePlain.add({ ...record, text: t })
          // Tokens of an Analyzer with other options, a text that is not the part at start, ids of a token vocabulary
          // that started over since (as if: ids shifted, of another epoch): read in full.
          const stale = { ...tokenized, ids: tokenized.ids.map((id) => (id < 0 ? id : id + 1)), epoch: {} }
          // And tokens whose analyzer is not this copy's Analyzer (another copy of the library): read in full too.
          const foreign = { ...tokenized, analyzer: { options: chunker.options } as unknown as Analyzer }
          const wrong = [{ tokens: other.tokenized(source), start }, { tokens: tokenized, start: start + 1 }, { tokens: stale, start }, { tokens: foreign, start }][i % 4] as { tokens: typeof tokenized; start: number }
          ignored.add({ ...record, text: ignored.prepareText(t, { within: wrong }) })
        })
        // The index's analyzer reads at most the two end runs of each part (fewer when memoized), never the runs between.
        expect(prepared.state.analyzer.unitsAnalyzed).toBeLessThanOrEqual(2 * parts.length)
        for (const [index, oracle] of [[prepared, plain], [alternate, alternatePlain], [ignored, plain]] as const) expectSameAs(index, oracle, queries)
      }),
      { numRuns: runs(200) },
    )
  })

  it('tokenized tells the tokens read so far as the reading reaches each mark; their chunks but the last are the whole text\'s', () => {
    const mark = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: -5, max: 2000 }) }, { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity) })
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, gap), { minLength: 1, maxLength: 30 }), fc.array(mark, { maxLength: 6 }), fc.integer({ min: 1, max: 8 }), (pieces, marks, size) => {
        const source = pieces.map(([p, g]) => p + g).join('')
        const overlap = size > 1 ? 1 : 0
        const whole = new Analyzer().tokenized(source)
        const chunks = chunkTokenized(whole, { size, overlap })
        // The oracle: the finite marks in order; the first token starting at or past a mark tells the tokens
        // before it, once for all the marks it passes.
        const finite = marks.filter(Number.isFinite).sort((a, b) => a - b)
        const expected: number[] = []
        let next = 0
        for (let i = 0; i < whole.ids.length; i++) {
          const start = whole.offsets[2 * i] as number
          if (next >= finite.length || start < (finite[next] as number)) continue
          expected.push(i)
          while (next < finite.length && (finite[next] as number) <= start) next++
        }
        const told: number[] = []
        const got = new Analyzer().tokenized(source, {
          marks,
          onPart: (sofar) => {
            told.push(sofar.ids.length)
            expect([...sofar.offsets]).toEqual([...whole.offsets.subarray(0, sofar.offsets.length)])
            const known = chunkTokenized(sofar, { size, overlap }).slice(0, -1)
            expect(known).toEqual(chunks.slice(0, known.length))
          },
        })
        expect(told).toEqual(expected)
        expect([...got.offsets]).toEqual([...whole.offsets])
      }),
      { numRuns: runs(150) },
    )
  })

  it('the snapshot is the plain one byte for byte, texts prepared before any add; another index analyzes the text itself', () => {
    const texts: TextInput[] = ['Shock waves in the boundary layer', { title: 'Heat transfer', body: 'flows of heat, naïve café' }, 'x-ray me@x.org U.S. 3.5', 'layer flows flow Flowing']
    const [plain, prepared] = twins()
    const other = createIndex({ dimensions: 4, metric: 'cosine', dense: 'exact', text: { fields: { title: { boost: 2 } } } })
    const third = createIndex({ dimensions: 4, metric: 'cosine', dense: 'exact', text: { fields: { title: { boost: 2 } } } })
    // All prepared before the first add, the last text first.
    const ahead = [...texts].reverse().map((t) => prepared.prepareText(t)).reverse()
    texts.forEach((t, i) => {
      const record = { id: `r${i}`, vector: [i + 1, 1, 0, -1] }
      plain.add({ ...record, text: t })
      prepared.addMany([{ ...record, text: ahead[i] as PreparedText }])
      // Prepared by another index: analyzed again here, to the same record.
      third.add({ ...record, text: other.prepareText(t) })
    })
    const files = (index: QuarryIndex): Record<string, string> => {
      const dir = mkdtempSync(join(tmpdir(), 'quarry-prepared-'))
      dirs.push(dir)
      index.save(dir)
      const out: Record<string, string> = {}
      const walk = (at: string): void => {
        for (const e of readdirSync(at, { withFileTypes: true })) {
          if (e.isDirectory()) walk(join(at, e.name))
          // The manifest names its generation's time; every data file is compared by content.
          else if (!e.name.endsWith('.json')) out[e.name] = readFileSync(join(at, e.name)).toString('base64')
        }
      }
      walk(dir)
      return out
    }
    const want = files(plain)
    expect(Object.keys(want).length).toBeGreaterThan(3)
    expect(files(prepared)).toEqual(want)
    expect(files(third)).toEqual(want)
    expect(prepared.get('r1')?.text).toEqual({ title: 'Heat transfer', body: 'flows of heat, naïve café' })
    expect(prepared.prepareText('a').text).toBe('a')
  })

  it('refuses what add refuses (a PreparedText is not text fields either); changes nothing, so it may run during a saveInSlices', async () => {
    const [index, twin] = twins()
    expect(() => index.prepareText(42 as unknown as string)).toThrowError(expect.objectContaining({ code: 'INVALID_RECORD', path: 'text' }) as Error)
    expect(() => index.prepareText({ title: 7 } as unknown as TextInput)).toThrowError(expect.objectContaining({ code: 'INVALID_RECORD', path: 'text.title' }) as Error)
    expect(() => index.prepareText(undefined as unknown as string)).toThrowError(expect.objectContaining({ code: 'INVALID_RECORD' }) as Error)
    // A part of a tokenized text must say where it starts: an integer offset from 0.
    const tokens = new Analyzer().tokenized('shock waves in the boundary layer')
    for (const start of [-3, 0.5, Number.NaN, undefined, '6']) {
      expect(() => index.prepareText('waves', { within: { tokens, start: start as number } })).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', path: 'within.start' }) as Error)
    }
    // A PreparedText given as text to prepare again, or one that is not this copy's class: refused, not stored as { text }.
    expect(() => index.prepareText(index.prepareText('flow') as unknown as TextInput)).toThrowError(expect.objectContaining({ code: 'INVALID_RECORD', path: 'text' }) as Error)
    const foreign = Object.assign(Object.create({ constructor: { name: 'PreparedText' } }) as object, { text: 'flow' })
    expect(() => index.add({ id: 'f', vector: [1, 0, 0, 0], text: foreign as TextInput })).toThrowError(/another copy of @quarry\/core/)
    index.add({ id: 'a', vector: [1, 0, 0, 0], text: 'flow' })
    twin.add({ id: 'a', vector: [1, 0, 0, 0], text: 'flow' })
    const dir = mkdtempSync(join(tmpdir(), 'quarry-prepared-'))
    const twinDir = mkdtempSync(join(tmpdir(), 'quarry-prepared-'))
    dirs.push(dir, twinDir)
    const saving = index.saveInSlices(dir, { sliceMs: 0 })
    // New and known terms alike, while the save runs: nothing of them reaches the snapshot.
    const ahead = index.prepareText('zebra quokka flow')
    await saving
    twin.save(twinDir)
    const bytes = (d: string): string[] => readdirSync(join(d, readFileSync(join(d, 'CURRENT'), 'utf8').trim())).filter((f) => f.endsWith('.bin')).sort().map((f) => readFileSync(join(d, readFileSync(join(d, 'CURRENT'), 'utf8').trim(), f)).toString('base64'))
    expect(bytes(dir)).toEqual(bytes(twinDir))
    index.add({ id: 'b', vector: [0, 1, 0, 0], text: ahead })
    twin.add({ id: 'b', vector: [0, 1, 0, 0], text: 'zebra quokka flow' })
    expect(index.search({ text: 'quokka flow', topK: 2 }).hits).toEqual(twin.search({ text: 'quokka flow', topK: 2 }).hits)
  })
})
