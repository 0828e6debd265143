import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { thrown as thrownBy } from '../support/thrown.js'
import { Analyzer, chunkText, chunkTokenized, compileFilter, createGloveEmbedder, createHashingEmbedder, createIndex, embedAll, loadIndex, QuarryError, type QuarryErrorCode } from '@quarry/core'

function codeOf(f: () => unknown): { code: QuarryErrorCode; path: string | undefined; message: string } {
  try {
    f()
  } catch (error) {
    expect(error).toBeInstanceOf(QuarryError)
    const e = error as QuarryError
    return { code: e.code, path: e.path, message: e.message }
  }
  throw new Error('expected a QuarryError, nothing was thrown')
}

describe('bad input gets a QuarryError with a stable code, a path and a fix', () => {
  const index = createIndex({ dimensions: 3, metric: 'cosine' })
  index.add({ id: 'a', vector: [1, 0, 0] })
  const folder = mkdtempSync(join(tmpdir(), 'quarry-errors-'))
  afterAll(() => rmSync(folder, { recursive: true, force: true }))
  const aFile = join(folder, 'a-file')
  writeFileSync(aFile, 'not a folder')

  it.each([
    ['zero dimensions', () => createIndex({ dimensions: 0 }), 'INVALID_OPTION', 'dimensions'],
    ['bm25 b out of range', () => createIndex({ text: { bm25: { b: 1.5 } } }), 'INVALID_OPTION', 'text.bm25.b'],
    ['unknown analyzer option', () => createIndex({ text: { analyzer: { stemmer: 'x' } as never } }), 'INVALID_OPTION', 'text.analyzer.stemmer'],
    ['alpha out of range', () => index.search({ text: 'a', vector: [1, 0, 0], alpha: 1.5 }), 'INVALID_QUERY', 'alpha'],
    ['both thresholds', () => index.search({ vector: [1, 0, 0], maxDistance: 0.5, minSimilarity: 0.5 }), 'INVALID_QUERY', 'minSimilarity'],
    ['unknown fusion', () => index.search({ text: 'a', vector: [1, 0, 0], fusion: 'max' as never }), 'INVALID_QUERY', 'fusion'],
    ['record without a vector in a vector index', () => index.add({ id: 'b', text: 'hello' }), 'INVALID_VECTOR', 'vector'],
    ['text that is not a string', () => index.add({ id: 'b', vector: [0, 1, 0], text: 5 as never }), 'INVALID_RECORD', 'text'],
    ['fractional dimensions', () => createIndex({ dimensions: 2.5 }), 'INVALID_OPTION', 'dimensions'],
    ['unknown metric', () => createIndex({ dimensions: 3, metric: 'hamming' as never }), 'INVALID_OPTION', 'metric'],
    ['hnsw.m out of range', () => createIndex({ dimensions: 3, hnsw: { m: 1 } }), 'INVALID_OPTION', 'hnsw.m'],
    ['unknown option', () => createIndex({ dimensions: 3, metrc: 'l2' } as never), 'INVALID_OPTION', 'metrc'],
    ['wrong dimension on add', () => index.add({ id: 'b', vector: [1, 2] }), 'DIMENSION_MISMATCH', 'vector'],
    ['NaN in a vector', () => index.add({ id: 'b', vector: [1, Number.NaN, 0] }), 'INVALID_VECTOR', 'vector[1]'],
    ['Infinity in a vector', () => index.add({ id: 'b', vector: [1, 0, Number.POSITIVE_INFINITY] }), 'INVALID_VECTOR', 'vector[2]'],
    ['float32 overflow', () => index.add({ id: 'b', vector: [1e39, 0, 0] }), 'INVALID_VECTOR', 'vector[0]'],
    // Float32Arrays are checked by their sum of squares, then element by element only to name the culprit.
    ['NaN in a Float32Array query', () => index.search({ vector: Float32Array.of(1, Number.NaN, Number.POSITIVE_INFINITY) }), 'INVALID_VECTOR', 'vector[1]'],
    ['-Infinity in a Float32Array', () => index.add({ id: 'b', vector: Float32Array.of(3e38, 3e38, Number.NEGATIVE_INFINITY) }), 'INVALID_VECTOR', 'vector[2]'],
    ['zero Float32Array query with cosine', () => index.search({ vector: new Float32Array(3) }), 'INVALID_VECTOR', 'vector'],
    ['zero vector with cosine', () => index.add({ id: 'b', vector: [0, 0, 0] }), 'INVALID_VECTOR', 'vector'],
    // 1/‖v‖ overflows float32 below ~2.9e-39 (found by @quarry/core/testing's subnormal vectors).
    ['subnormal vector with cosine', () => index.add({ id: 'b', vector: [0, 0, 1.4e-45] }), 'INVALID_VECTOR', 'vector'],
    ['vector not an array', () => index.add({ id: 'b', vector: 'x' as never }), 'INVALID_VECTOR', 'vector'],
    ['duplicate id', () => index.add({ id: 'a', vector: [0, 1, 0] }), 'DUPLICATE_ID', 'id'],
    ['empty id', () => index.add({ id: '', vector: [0, 1, 0] }), 'INVALID_ID', 'id'],
    ['numeric id', () => index.add({ id: 7 as never, vector: [0, 1, 0] }), 'INVALID_ID', 'id'],
    ['metadata NaN', () => index.add({ id: 'b', vector: [0, 1, 0], metadata: { n: Number.NaN } }), 'INVALID_RECORD', 'metadata.n'],
    ['metadata nested object', () => index.add({ id: 'b', vector: [0, 1, 0], metadata: { n: { x: 1 } as never } }), 'INVALID_RECORD', 'metadata.n'],
    // Not plain objects: only their own enumerable fields would be stored ({} for a Map).
    ['metadata as a Map', () => index.add({ id: 'b', vector: [0, 1, 0], metadata: new Map([['k', 'v']]) as never }), 'INVALID_RECORD', 'metadata'],
    ['metadata as a class instance', () => index.add({ id: 'b', vector: [0, 1, 0], metadata: new (class Tags { k = 'v' })() as never }), 'INVALID_RECORD', 'metadata'],
    ['metadata as a Map, replaced', () => index.replaceMetadata('a', new Map() as never), 'INVALID_RECORD', 'metadata'],
    ['metadata as a Map, upserted', () => index.upsert({ id: 'a', vector: [1, 0, 0], metadata: new Map() as never }), 'INVALID_RECORD', 'metadata'],
    ['metadata as a Map in a batch', () => index.addMany([{ id: 'n7', vector: [1, 1, 1] }, { id: 'n8', vector: [1, 1, 1], metadata: new Map() as never }]), 'INVALID_RECORD', 'records[1].metadata'],
    ['unknown id as query', () => index.search({ id: 'zzz' }), 'UNKNOWN_ID', 'id'],
    ['no query', () => index.search({}), 'INVALID_QUERY', 'vector'],
    ['both vector and id', () => index.search({ id: 'a', vector: [1, 0, 0] }), 'INVALID_QUERY', 'vector'],
    ['topK 0', () => index.search({ vector: [1, 0, 0], topK: 0 }), 'INVALID_QUERY', 'topK'],
    ['topK too large', () => index.search({ vector: [1, 0, 0], topK: 10_001 }), 'INVALID_QUERY', 'topK'],
    ['filter neither a function nor a declarative filter', () => index.search({ vector: [1, 0, 0], filter: { year: 1 } as never }), 'INVALID_QUERY', 'filter.op'],
    ['query dimension', () => index.search({ vector: [1, 0] }), 'DIMENSION_MISMATCH', 'vector'],
    ['batch with a duplicate', () => index.addMany([{ id: 'n1', vector: [1, 1, 1] }, { id: 'n1', vector: [1, 1, 1] }]), 'DUPLICATE_ID', 'records[1].id'],
    ['batch with a bad vector', () => index.addMany([{ id: 'n2', vector: [1, 1, 1] }, { id: 'n3', vector: [1, 1] }]), 'DIMENSION_MISMATCH', 'records[1].vector'],
    ['save with no folder', () => index.save(undefined as never), 'INVALID_OPTION', 'dir'],
    ['save into a file', () => index.save(aFile), 'INVALID_OPTION', 'dir'],
    ['save under a file', () => index.save(join(aFile, 'sub')), 'INVALID_OPTION', 'dir'],
    ['loadIndex with no folder', () => loadIndex(undefined as never), 'INVALID_OPTION', 'dir'],
    ['loadIndex of a folder that does not exist', () => loadIndex(join(folder, 'missing')), 'INVALID_SNAPSHOT', undefined],
    ['chunkText without options', () => chunkText(new Analyzer(), 'some text', undefined as never), 'INVALID_OPTION', 'options'],
    ['chunkText of a number (gave no chunks)', () => chunkText(new Analyzer(), 5 as never, { size: 2, overlap: 0 }), 'INVALID_OPTION', 'text'],
    ['chunkText with an object for its analyzer', () => chunkText({} as never, 'some text', { size: 2, overlap: 0 }), 'INVALID_OPTION', 'analyzer'],
    ['loadIndex with an unknown option', () => loadIndex(folder, { embeder: 1 } as never), 'INVALID_OPTION', 'embeder'],
    ['a filter key its op does not take', () => index.search({ vector: [1, 0, 0], filter: { op: 'eq', field: 'n', value: 1, values: [2] } as never }), 'INVALID_QUERY', 'filter.values'],
    ['a misspelt filter key, nested', () => index.search({ vector: [1, 0, 0], filter: { op: 'not', filter: { op: 'exists', feild: 'n', field: 'm' } } as never }), 'INVALID_QUERY', 'filter.filter.feild'],
    ['a misspelt record field', () => index.add({ id: 'b', vector: [0, 1, 0], metdata: { kind: 'x' } } as never), 'INVALID_RECORD', 'metdata'],
    ['a misspelt field in a batch', () => index.addMany([{ id: 'n4', vector: [1, 1, 1] }, { id: 'n5', vector: [1, 1, 1], txt: 'x' } as never]), 'INVALID_RECORD', 'records[1].txt'],
    ['createIndex(null)', () => createIndex(null as never), 'INVALID_OPTION', 'options'],
    // The embedder's dimensions were read with the index's fallback of 0 (no dimensions): a graph's RangeError, or 0-d vectors.
    ['an embedder without dimensions', () => createIndex({ embedder: { name: 'x' } as never }), 'INVALID_OPTION', 'embedder.dimensions'],
    ['an embedder without dimensions, exact', () => createIndex({ embedder: { name: 'x' } as never, dense: 'exact' }), 'INVALID_OPTION', 'embedder.dimensions'],
    ['an embedder of 0 dimensions', () => createIndex({ embedder: { name: 'x', dimensions: 0, embed: async () => [] } }), 'INVALID_OPTION', 'embedder.dimensions'],
    ['an embedder whose name is not a string', () => createIndex({ embedder: { name: 7, dimensions: 3, embed: async () => [] } as never }), 'INVALID_OPTION', 'embedder.name'],
    ['an embedder whose embed is not a function', () => createIndex({ embedder: { name: 'x', dimensions: 3, embed: 'model' } as never }), 'INVALID_OPTION', 'embedder.embed'],
    ['a datetime filter value of a day its month lacks (V8 reads it as March 2)', () => index.search({ vector: [1, 0, 0], filter: { op: 'gte', field: 't', value: { datetime: '2023-02-30T00:00:00Z' } } }), 'INVALID_QUERY', 'filter.value'],
    ['a datetime filter value with another key', () => index.search({ vector: [1, 0, 0], filter: { op: 'gte', field: 't', value: { datetime: '2024-01-01T00:00:00Z', tz: 'x' } as never } }), 'INVALID_QUERY', 'filter.value.tz'],
    ['a Date as a filter value (a filter is JSON)', () => index.search({ vector: [1, 0, 0], filter: { op: 'gte', field: 't', value: new Date(0) as never } }), 'INVALID_QUERY', 'filter.value'],
    ['a filter function that returns a Promise', () => index.search({ vector: [1, 0, 0], filter: ((m: { n?: unknown }) => Promise.resolve(m.n === 1)) as never }), 'FILTER_FAILED', 'filter'],
    ['alpha on a search without text (nothing to fuse)', () => index.search({ vector: [1, 0, 0], alpha: 0.3 }), 'INVALID_QUERY', 'alpha'],
    ['explain on a search without text (nothing to explain)', () => index.search({ vector: [1, 0, 0], explain: true }), 'INVALID_QUERY', 'explain'],
    ['minSimilarity on a search of text alone (no vector side)', () => index.search({ text: 'a', minSimilarity: 0.5 }), 'INVALID_QUERY', 'minSimilarity'],
    ['exact on a search of text alone', () => index.search({ text: 'a', exact: true }), 'INVALID_QUERY', 'exact'],
    ['an async filter function (its Promise passes every record)', () => index.search({ vector: [1, 0, 0], filter: (async () => false) as never }), 'INVALID_QUERY', 'filter'],
    ['a generator filter function (its iterator passes every record)', () => index.search({ vector: [1, 0, 0], filter: function* () {} as never }), 'INVALID_QUERY', 'filter'],
    ['an async generator filter function', () => index.search({ vector: [1, 0, 0], filter: async function* () {} as never }), 'INVALID_QUERY', 'filter'],
    ['chunkText with an unknown option', () => chunkText(new Analyzer(), 'some text', { size: 3, overlap: 1, foo: 1 } as never), 'INVALID_OPTION', 'foo'],
    ['save with a misspelt option', () => index.save(join(folder, 'typo'), { linkUnchaged: true } as never), 'INVALID_OPTION', 'linkUnchaged'],
    ['hashing embedder of 0 dimensions', () => createHashingEmbedder({ dimensions: 0 }), 'INVALID_OPTION', 'dimensions'],
    ['hashing embedder of 1.5 dimensions', () => createHashingEmbedder({ dimensions: 1.5 }), 'INVALID_OPTION', 'dimensions'],
    ['hashing embedder, misspelt option', () => createHashingEmbedder({ dimension: 64 } as never), 'INVALID_OPTION', 'dimension'],
    ['GloVe embedder with a = NaN', () => createGloveEmbedder({ a: Number.NaN }), 'INVALID_OPTION', 'a'],
    ['GloVe embedder with a = 0', () => createGloveEmbedder({ a: 0 }), 'INVALID_OPTION', 'a'],
    ['GloVe embedder with a fractional vocabulary', () => createGloveEmbedder({ vocabulary: 1.5 }), 'INVALID_OPTION', 'vocabulary'],
    ['GloVe embedder, misspelt option', () => createGloveEmbedder({ vocab: 5 } as never), 'INVALID_OPTION', 'vocab'],
    ['addMany of an object', () => index.addMany({ id: 'n6', vector: [1, 1, 1] } as never), 'INVALID_RECORD', undefined],
    ['addMany of a Set', () => index.addMany(new Set([{ id: 'n6', vector: [1, 1, 1] }]) as never), 'INVALID_RECORD', undefined],
    ['a search from inside a filter of the same index', () => index.search({ vector: [1, 0, 0], filter: () => index.search({ vector: [0, 1, 0] }).hits.length > 0 }), 'FILTER_FAILED', 'filter'],
  ] as const)('%s', (_name, f, code, path) => {
    const error = codeOf(f)
    expect(error.code).toBe(code)
    expect(error.path).toBe(path)
    expect(error.message.length).toBeGreaterThan(20)
  })

  it('an embedder is named and measured: its dimensions are required, its embed a function', () => {
    expect(codeOf(() => createIndex({ embedder: { name: 'x' } as never }))).toEqual({
      code: 'INVALID_OPTION',
      path: 'embedder.dimensions',
      message: 'embedder.dimensions must be the length of the vectors the embedder makes, an integer from 1 to 65536; received undefined.',
    })
    expect(codeOf(() => createIndex({ embedder: { name: 'x', dimensions: 3, embed: 'model' } as never })).message).toBe(
      'embedder.embed must be a function embed(texts) returning a Promise of Float32Arrays; received "model".',
    )
  })

  it('metadata is a plain object: a Map or a class instance is refused, saying so; a null-prototype object is plain', () => {
    const m = createIndex({ dimensions: 2, dense: 'exact' })
    expect(codeOf(() => m.add({ id: 'm', vector: [1, 1], metadata: new Map([['k', 'v']]) as never }))).toEqual({
      code: 'INVALID_RECORD',
      path: 'metadata',
      message: "metadata must be a plain object of string, number, boolean or string-list values, like { genre: 'drama' }; received an instance of Map (Object.fromEntries(map) makes one of it).",
    })
    class Tags {
      k = 'v'
      get g(): string {
        return 'x'
      }
    }
    expect(codeOf(() => m.add({ id: 'c', vector: [1, 1], metadata: new Tags() as never })).message).toBe(
      "metadata must be a plain object of string, number, boolean or string-list values, like { genre: 'drama' }; received an instance of Tags.",
    )
    // A Map as the record itself: said so, not refused for the id its entries do not make a field.
    expect(codeOf(() => m.add(new Map<string, unknown>([['id', 'r'], ['vector', [1, 1]]]) as never))).toMatchObject({
      code: 'INVALID_RECORD',
      message: 'a record must be an object like { id, vector, text, metadata }; received a Map (Object.fromEntries(map) makes one of it).',
    })
    expect(m.size).toBe(0)
    m.add({ id: 'n', vector: [1, 1], metadata: Object.assign(Object.create(null) as object, { k: 'v' }) })
    expect(m.get('n')?.metadata).toEqual({ k: 'v' })
  })

  it('compileFilter checks its filter as search does: the same code, path and message', () => {
    for (const bad of [null, { op: 'and' }, { op: 'eq', field: 'n', value: 1, extra: 1 }, { op: 'eq', field: 'n', value: Number.NaN }, { op: 'or', filters: [{ op: 'in', field: 'n', values: [1, {}] }] }]) {
      const searched = codeOf(() => index.search({ vector: [1, 0, 0], filter: bad as never }))
      expect(searched.code).toBe('INVALID_QUERY')
      expect(codeOf(() => compileFilter(bad as never))).toEqual(searched)
    }
    expect(codeOf(() => compileFilter({ op: 'eq', field: 'n', value: Number.NaN }))).toEqual({ code: 'INVALID_QUERY', path: 'filter.value', message: 'filter.value: a number in a filter must be finite; received NaN.' })
    expect(codeOf(() => compileFilter({ op: 'and' } as never))).toEqual({ code: 'INVALID_QUERY', path: 'filter.filters', message: "filter.filters: 'and' takes filters: an array of filters." })
    // A valid filter compiles as before.
    expect(compileFilter({ op: 'gte', field: 'n', value: 1 })({ n: 2 })).toBe(true)
  })

  it('chunkText says what it takes: an Analyzer, then a string', () => {
    expect(codeOf(() => chunkText(new Analyzer(), 5 as never, { size: 2, overlap: 0 })).message).toBe('chunkText takes the text to chunk as a string; received 5.')
    expect(codeOf(() => chunkText({} as never, 'some text', { size: 2, overlap: 0 })).message).toBe(
      'chunkText takes an Analyzer first (new Analyzer(), with the options of the index the chunks go to); received an object.',
    )
    expect(chunkText(new Analyzer(), '', { size: 2, overlap: 0 })).toEqual([])
  })

  it("an Analyzer's methods and chunkTokenized say what they take", () => {
    const analyzer = new Analyzer()
    // terms(42) was [], tokens(null) a TypeError, tokenized({}) tokens of nothing.
    expect(codeOf(() => analyzer.terms(42 as never))).toEqual({ code: 'INVALID_OPTION', path: 'text', message: 'Analyzer.terms takes the text as a string; received 42.' })
    expect(codeOf(() => analyzer.tokens(null as never)).message).toBe('Analyzer.tokens takes the text as a string; received null.')
    expect(codeOf(() => analyzer.tokenized({} as never)).message).toBe('Analyzer.tokenized takes the text as a string; received an object.')
    expect(codeOf(() => analyzer.tokenOffsets(undefined as never)).message).toBe('Analyzer.tokenOffsets takes the text as a string; received undefined.')
    for (const progress of [{ marks: 5, onPart: () => {} }, { marks: [1], onPart: 3 }, null]) {
      expect(codeOf(() => analyzer.tokenized('red fox', progress as never))).toMatchObject({ code: 'INVALID_OPTION', path: 'progress' })
    }
    expect(codeOf(() => chunkTokenized('red fox' as never, { size: 2, overlap: 0 })).message).toBe('chunkTokenized takes what Analyzer.tokenized(text) returns; received "red fox".')
    // Valid input as before.
    expect(analyzer.terms('Red foxes')).toEqual(['red', 'fox'])
    expect(chunkTokenized(analyzer.tokenized('red fox jumps'), { size: 2, overlap: 1 }).map((c) => c.text)).toEqual(['red fox', 'fox jumps'])
  })

  it("core's embedders called directly take an array of strings, and say so", async () => {
    const failure = async (call: Promise<unknown>): Promise<unknown> =>
      call.then(
        () => 'resolved',
        (e: unknown) => (e instanceof QuarryError ? { code: e.code, path: e.path, message: e.message } : e),
      )
    for (const embedder of [createHashingEmbedder({ dimensions: 8 }), createGloveEmbedder()]) {
      expect(await failure(embedder.embed('abc' as never))).toEqual({ code: 'INVALID_OPTION', path: 'texts', message: 'embed takes an array of texts; received "abc" (a single text: [text]).' })
      expect(await failure(embedder.embed([1] as never))).toEqual({ code: 'INVALID_OPTION', path: 'texts[0]', message: 'embed takes an array of texts (strings); texts[0] is 1.' })
    }
  })

  it('a filter that answers later (async, generator, async generator) is refused in the same words', () => {
    const refused = (filter: unknown) => codeOf(() => index.search({ vector: [1, 0, 0], text: 'a', filter: filter as never }))
    const message = (answers: string) => `filter must answer true or false at once: ${answers} (which every record would pass). Read what it needs first, then filter with a plain function.`
    expect(refused(async () => false)).toEqual({ code: 'INVALID_QUERY', path: 'filter', message: message('an async function answers a Promise') })
    expect(refused(function* () {})).toEqual({ code: 'INVALID_QUERY', path: 'filter', message: message('a generator function answers an iterator') })
    expect(refused(async function* () {})).toEqual({ code: 'INVALID_QUERY', path: 'filter', message: message('an async generator function answers an async iterator') })
  })

  it('stopWords that are neither a boolean nor a list of strings are refused, naming both', () => {
    expect(codeOf(() => createIndex({ text: { analyzer: { stopWords: 'x' as never } } }))).toEqual({
      code: 'INVALID_OPTION',
      path: 'text.analyzer.stopWords',
      message: 'text.analyzer.stopWords must be true, false or a list of strings; received "x".',
    })
    expect(codeOf(() => createIndex({ text: { analyzer: { stopWords: ['a', 3] as never } } })).message).toBe('text.analyzer.stopWords must be true, false or a list of strings; received a list holding 3 at [1].')
  })

  it('explain without text is refused: a vector search has nothing to explain', () => {
    expect(codeOf(() => index.search({ vector: [1, 0, 0], explain: true })).message).toBe(
      'explain shows how the text scored (BM25 terms, and how a hybrid hit was fused), and this search has no text: give text too, or leave explain out.',
    )
  })

  it('a misspelt filter key is named even when it leaves a key missing, with the key it may stand for', () => {
    const search = (filter: unknown) => () => index.search({ vector: [1, 0, 0], filter: filter as never })
    expect(codeOf(search({ op: 'eq', feild: 'x', value: 1 }))).toEqual({
      code: 'INVALID_QUERY',
      path: 'filter.feild',
      message: 'filter.feild: a \'eq\' filter takes op, field, value; "feild" is none of them, and field is missing: is "feild" a misspelt field?',
    })
    expect(codeOf(search({ op: 'and', filters: [{ op: 'in', feild: 'x', valeus: [1] }] }))).toEqual({
      code: 'INVALID_QUERY',
      path: 'filter.filters[0].feild',
      message: 'filter.filters[0].feild: a \'in\' filter takes op, field, values; "feild" is none of them, and field, values are missing.',
    })
    // Nothing missing: the key is named alone.
    expect(codeOf(search({ op: 'exists', field: 'x', value: 1 }))).toEqual({ code: 'INVALID_QUERY', path: 'filter.value', message: 'filter.value: a \'exists\' filter takes op, field; "value" is none of them.' })
  })

  it('a failed batch writes nothing', () => {
    expect(index.has('n2')).toBe(false)
    expect(index.has('n4')).toBe(false)
    expect(index.size).toBe(1)
  })

  it('a hole in a batch is a record too: refused, and nothing before it is written', () => {
    const batch = new Array<{ id: string; vector: number[] }>(3)
    batch[0] = { id: 'h0', vector: [1, 0, 0] }
    batch[2] = { id: 'h2', vector: [0, 1, 0] }
    const error = codeOf(() => index.addMany(batch))
    expect(error).toMatchObject({ code: 'INVALID_RECORD', path: 'records[1]' })
    expect(index.has('h0')).toBe(false)
    expect(index.size).toBe(1)
    // The batch goes in whole once the hole is filled: ids h0, h1, h2.
    batch[1] = { id: 'h1', vector: [0, 0, 1] }
    index.addMany(batch)
    expect(index.search({ vector: [0, 0, 1], topK: 1 }).hits.map((h) => [h.id, h.score])).toEqual([['h1', 1]])
    for (const id of ['h0', 'h1', 'h2']) index.remove(id)
  })

  it('a filter function that searches or writes the index it filters fails the search, which leaves the index as it was', () => {
    const searched = codeOf(() => index.search({ vector: [1, 0, 0], filter: () => index.search({ vector: [0, 1, 0] }).hits.length > 0 }))
    expect(searched.code).toBe('FILTER_FAILED')
    expect(((thrownBy(() => index.search({ vector: [1, 0, 0], filter: () => index.search({ vector: [0, 1, 0] }).hits.length > 0 })) as QuarryError).cause as QuarryError).code).toBe('INVALID_QUERY')
    const wrote = thrownBy(() => index.search({ vector: [1, 0, 0], filter: () => (index.add({ id: 'w', vector: [0, 1, 0] }), true) })) as QuarryError
    expect(wrote.code).toBe('FILTER_FAILED')
    expect((wrote.cause as QuarryError).code).toBe('BUSY')
    expect(wrote.message).toBe(
      'the filter function threw on record "a": a search of this index is under way: a filter function must not add, replace or remove records of the index it filters. Fix the filter; the index is unchanged.',
    )
    // A reason without a period of its own gets one.
    expect(codeOf(() => index.search({ vector: [1, 0, 0], filter: () => { throw new Error('no year') } })).message).toBe('the filter function threw on record "a": no year. Fix the filter; the index is unchanged.')
    expect(index.has('w')).toBe(false)
    // Reads of the index are fine from a filter, and a search after a refused one answers as before.
    expect(index.search({ vector: [1, 0, 0], filter: () => index.has('a') }).hits.map((h) => [h.id, h.score])).toEqual([['a', 1]])
  })

  it('index.options is frozen through: reading and copying it work, changing it throws', () => {
    const own = createIndex({ dimensions: 3, text: { analyzer: { stopWords: ['x'] } } })
    expect(Object.isFrozen(own.options)).toBe(true)
    expect(Object.isFrozen(own.options.text.bm25)).toBe(true)
    expect(() => {
      ;(own.options as { dimensions: number }).dimensions = 2
    }).toThrow(TypeError)
    expect(() => {
      ;(own.options.text.bm25 as { k1: number }).k1 = Number.NaN
    }).toThrow(TypeError)
    expect(own.options.dimensions).toBe(3)
    expect(own.options.text.bm25.k1).toBe(1.2)
    const copy = { ...own.options, dimensions: 4 }
    expect(createIndex({ dimensions: copy.dimensions }).options.dimensions).toBe(4)
  })

  it('a throwing filter fails the search with FILTER_FAILED and never aborts the process, on every path', () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({ id: `r${i}`, vector: [i, i % 7], metadata: { i } }))
    const plans = [
      { planner: { exactBelow: 0, exactFilterMax: 1000 }, keep: (i: number) => i % 2 === 0, strategy: 'hnsw-postfilter' },
      { planner: { exactBelow: 0, exactFilterMax: 0, postFilterAbove: 1 }, keep: (i: number) => i % 10 === 0, strategy: 'hnsw-filtered' },
      { planner: { exactBelow: 0, postFilterAbove: 1 }, keep: (i: number) => i % 10 === 0, strategy: 'exact-filtered' },
    ]
    for (const { planner, keep, strategy } of plans) {
      const index = createIndex({ dimensions: 2, metric: 'l2', planner })
      index.addMany(records)
      // A dry run counts the filter calls; then the filter throws on the first, a middle and the last one.
      let calls = 0
      const dry = index.search({ vector: [3, 3], filter: (m) => (calls++, keep(m.i as number)) })
      expect(dry.stats.strategy).toBe(strategy)
      for (const throwAt of [1, Math.ceil(calls / 2), calls]) {
        let n = 0
        const error = codeOf(() =>
          index.search({
            vector: [3, 3],
            filter: (m) => {
              if (++n === throwAt) throw new Error('bad filter')
              return keep(m.i as number)
            },
          }),
        )
        expect(error.code).toBe('FILTER_FAILED')
        expect(error.message).toContain('bad filter')
      }
      // A filter answering a Promise (truthy: it would keep every record) fails the same way, on every path.
      const promised = codeOf(() => index.search({ vector: [3, 3], filter: ((m: { i?: unknown }) => Promise.resolve(keep(m.i as number))) as never }))
      expect([promised.code, promised.message]).toEqual(['FILTER_FAILED', expect.stringContaining('the filter function answered a Promise on record') as string])
      // The index is still usable afterwards.
      expect(index.search({ vector: [3, 3], topK: 1 }).hits[0]?.id).toBe('r3')
    }
  })

  it('a folder that does not exist is said to be missing; a file given as a folder is named', () => {
    expect(codeOf(() => loadIndex(join(folder, 'missing'))).message).toContain('the folder does not exist (check the path)')
    expect(codeOf(() => loadIndex(aFile))).toMatchObject({ code: 'INVALID_SNAPSHOT', message: expect.stringContaining('it is a file, not a folder') as string })
    expect(codeOf(() => index.save(aFile)).message).toContain(`${aFile} is a file (or lies under one), not a folder`)
  })

  it('ingest and query refuse a record or a request without text before embedding anything', async () => {
    let embedded = 0
    const counting = createHashingEmbedder({ dimensions: 8 })
    const embedder = { name: counting.name, dimensions: counting.dimensions, embed: async (texts: readonly string[]) => ((embedded += texts.length), counting.embed(texts)) }
    const withEmbedder = createIndex({ embedder })
    const refusal = async (call: Promise<unknown>): Promise<{ code: string; path: string | undefined }> => {
      const error = await call.then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(QuarryError)
      return { code: (error as QuarryError).code, path: (error as QuarryError).path }
    }
    expect(await refusal(withEmbedder.ingest([{ id: 'a', text: 'fine' }, { id: 'b' } as never]))).toEqual({ code: 'INVALID_RECORD', path: 'records[1].text' })
    expect(await refusal(withEmbedder.ingest([null as never]))).toEqual({ code: 'INVALID_RECORD', path: 'records[0]' })
    expect(await refusal(withEmbedder.query({ vector: [1] } as never))).toEqual({ code: 'INVALID_QUERY', path: 'text' })
    // Each record's id, metadata and fields are checked before any text is embedded, as addMany checks before it writes.
    expect(await refusal(withEmbedder.ingest([{ id: 'a', text: 'x' }, { id: 'a', text: 'y' }]))).toEqual({ code: 'DUPLICATE_ID', path: 'records[1].id' })
    expect(await refusal(withEmbedder.ingest([{ id: 'a', text: 'x' }, { id: '', text: 'y' }]))).toEqual({ code: 'INVALID_ID', path: 'records[1].id' })
    expect(await refusal(withEmbedder.ingest([{ id: 'a', text: 'x', metadata: [1] as never }]))).toEqual({ code: 'INVALID_RECORD', path: 'records[0].metadata' })
    expect(await refusal(withEmbedder.ingest([{ id: 'a', text: 'x', metadata: new Map() as never }]))).toEqual({ code: 'INVALID_RECORD', path: 'records[0].metadata' })
    expect(await refusal(withEmbedder.ingest([{ id: 'a', text: 'x', vector: [1, 2] } as never]))).toEqual({ code: 'INVALID_RECORD', path: 'records[0].vector' })
    const holes = new Array<{ id: string; text: string }>(2)
    holes[1] = { id: 'b', text: 'y' }
    expect(await refusal(withEmbedder.ingest(holes))).toEqual({ code: 'INVALID_RECORD', path: 'records[0]' })
    expect(await refusal(withEmbedder.ingest({ id: 'a', text: 'x' } as never))).toEqual({ code: 'INVALID_RECORD', path: undefined })
    expect(await refusal(withEmbedder.query({ text: 'x', vector: [1] } as never))).toEqual({ code: 'INVALID_QUERY', path: 'vector' })
    expect(await refusal(withEmbedder.query({ text: 'x', id: 'a' } as never))).toEqual({ code: 'INVALID_QUERY', path: 'id' })
    expect(await refusal(withEmbedder.ingest([{ id: 'a', text: 'x' }], { batchsize: 2 } as never))).toEqual({ code: 'INVALID_OPTION', path: 'batchsize' })
    expect(await refusal(embedAll(embedder, 'abc' as never))).toEqual({ code: 'INVALID_OPTION', path: 'texts' })
    expect(await refusal(embedAll(embedder, ['a', 7] as never))).toEqual({ code: 'INVALID_OPTION', path: 'texts[1]' })
    expect(await refusal(withEmbedder.saveInSlices(join(folder, 'slices'), { sliceMS: 8 } as never))).toEqual({ code: 'INVALID_OPTION', path: 'sliceMS' })
    expect(await refusal(withEmbedder.saveInSlices(join(folder, 'slices'), { sliceMs: -1 }))).toEqual({ code: 'INVALID_OPTION', path: 'sliceMs' })
    expect(withEmbedder.saving).toBe(false)
    expect(embedded).toBe(0)
    expect(withEmbedder.size).toBe(0)
    // An index recording an embedder's name and dimensions without its embed function says so.
    const identityOnly = createIndex({ embedder: { name: 'recorded', dimensions: 3 } as never })
    const error = await identityOnly.ingest([{ id: 'a', text: 'x' }]).then(() => undefined, (e: unknown) => e)
    expect((error as QuarryError).code).toBe('EMBEDDER_MISMATCH')
    expect((error as QuarryError).message).toContain('it records "recorded", but was given no embed(texts) function')
  })

  it('createIndex() with no options is a text-only index; a dense search of it names what was given', () => {
    const textOnly = createIndex()
    textOnly.add({ id: 'a', text: 'desert wind' })
    expect(textOnly.search({ text: 'desert' }).hits.map((h) => h.id)).toEqual(['a'])
    expect(codeOf(() => textOnly.search({ id: 'a' }))).toMatchObject({ code: 'INVALID_QUERY', path: 'id' })
    expect(codeOf(() => textOnly.search({ vector: [1, 0] }))).toMatchObject({ code: 'INVALID_QUERY', path: 'vector' })
  })

  it('replaceMetadata changes what filters see and nothing else; an unknown id or bad metadata is refused', () => {
    const ix = createIndex({ dimensions: 3, metric: 'cosine' })
    ix.addMany([{ id: 'x', vector: [1, 0, 0], text: 'desert wind', metadata: { g: 'a' } }, { id: 'y', vector: [0.9, 0.1, 0], metadata: { g: 'b' } }])
    const dense = (filter?: { op: 'eq'; field: string; value: string }): unknown => ix.search({ vector: [1, 0, 0], topK: 2, ...(filter ? { filter } : {}) }).hits.map((h) => [h.id, h.score])
    const before = dense()
    ix.replaceMetadata('x', { g: 'b', n: 1 })
    expect(ix.get('x')).toMatchObject({ metadata: { g: 'b', n: 1 }, text: 'desert wind' })
    expect(Array.from(ix.get('x')?.vector ?? [])).toEqual([1, 0, 0])
    expect(dense()).toEqual(before)
    expect(dense({ op: 'eq', field: 'g', value: 'b' })).toEqual(before)
    expect(dense({ op: 'eq', field: 'g', value: 'a' })).toEqual([])
    expect(codeOf(() => ix.replaceMetadata('nobody', {}))).toMatchObject({ code: 'UNKNOWN_ID', path: 'id' })
    expect(codeOf(() => ix.replaceMetadata('x', { n: Number.NaN }))).toMatchObject({ code: 'INVALID_RECORD', path: 'metadata.n' })
    expect(ix.get('x')?.metadata).toEqual({ g: 'b', n: 1 })
  })

  it('remove of an unknown id returns false; get returns undefined', () => {
    expect(index.remove('nope')).toBe(false)
    expect(index.get('nope')).toBeUndefined()
  })
})
