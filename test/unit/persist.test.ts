import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIndex, loadIndex, QuarryError } from '@quarry/core'
import { clustered } from '../support/random.js'
import { decodeManifest, encodeManifest, type Manifest } from '../../packages/core/src/persist/manifest.js'
import { backgroundSumsFilled, backgroundSumsPrepared, backgroundSumsStarted, prepareLoad, replaceBackgroundSumThreshold } from '../../packages/core/src/persist/background-sums.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-persist-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('save / loadIndex', () => {
  const data = clustered(7, 3000, 16, 20)
  const index = createIndex({ dimensions: 16, metric: 'cosine', hnsw: { efSearch: 80 }, planner: { exactBelow: 0 } })
  index.addMany(data.map((vector, i) => ({ id: `v${i}`, vector, metadata: { even: i % 2 === 0, tags: [`t${i % 3}`] } })))
  for (let i = 0; i < 3000; i += 10) index.remove(`v${i}`)

  it('answers every query exactly as before: same ids, order, distances, metadata and stats', () => {
    const path = join(dir, 'a')
    index.save(path)
    const loaded = loadIndex(path)
    expect(loaded.size).toBe(index.size)
    expect(loaded.options).toEqual(index.options)
    for (const query of data.slice(0, 30)) {
      for (const filter of [undefined, (m: Readonly<Record<string, unknown>>) => m.even === true]) {
        const request = filter ? { vector: query, topK: 10, filter } : { vector: query, topK: 10 }
        expect(loaded.search(request)).toEqual(index.search(request))
      }
    }
    expect(loaded.get('v10')).toBeUndefined()
    expect(loaded.get('v11')).toEqual(index.get('v11'))
  })

  it('loads an empty HNSW index that then grows (hnswlib reads an empty graph back with room for 0)', () => {
    const path = join(dir, 'empty-hnsw')
    createIndex({ dimensions: 4, dense: 'hnsw' }).save(path)
    const loaded = loadIndex(path)
    // Before the fix this add never returned (capacity 0 doubled forever).
    loaded.addMany(Array.from({ length: 1500 }, (_, i) => ({ id: `e${i}`, vector: [1, i, i % 7, 1] })))
    expect(loaded.size).toBe(1500)
    expect(loaded.search({ vector: [1, 3, 3, 1], topK: 1 }).hits[0]?.id).toBe('e3')
  })

  it('restores ef (hnswlib resets it to 10 on read)', () => {
    const path = join(dir, 'b')
    index.save(path)
    const loaded = loadIndex(path)
    const { stats } = loaded.search({ vector: data[1] as number[], topK: 5 })
    expect(stats.ef).toBe(80)
  })

  it('reuses freed labels after load and keeps removed ids out', () => {
    const path = join(dir, 'c')
    index.save(path)
    const loaded = loadIndex(path)
    loaded.add({ id: 'new', vector: data[0] as number[] })
    const hits = loaded.search({ vector: data[0] as number[], topK: 3 }).hits
    expect(hits[0]?.id).toBe('new')
    expect(hits.map((h) => h.id)).not.toContain('v0')
    expect(loaded.size).toBe(index.size + 1)
  })

  it('replaces an existing snapshot atomically', () => {
    const path = join(dir, 'd')
    index.save(path)
    const small = createIndex({ dimensions: 16, dense: 'exact' })
    small.add({ id: 'only', vector: data[0] as number[] })
    small.save(path)
    const loaded = loadIndex(path)
    expect(loaded.size).toBe(1)
    expect(loaded.options.dense).toBe('exact')
  })

  const current = (path: string): string => join(path, readFileSync(join(path, 'CURRENT'), 'utf8').trim())

  it('refuses a missing, truncated, corrupted or other-version snapshot with INVALID_SNAPSHOT', () => {
    expect(() => loadIndex(join(dir, 'missing'))).toThrowError(expect.objectContaining({ code: 'INVALID_SNAPSHOT' }) as Error)
    const path = join(dir, 'e')
    index.save(path)
    const vectors = join(current(path), 'vectors.f32')
    const bytes = readFileSync(vectors)
    writeFileSync(vectors, bytes.subarray(0, bytes.length - 4))
    expect(() => loadIndex(path)).toThrowError(/vectors\.f32 has .* bytes.*truncated/)
    const flipped = Buffer.from(bytes)
    flipped[100] = (flipped[100] as number) ^ 0xff
    writeFileSync(vectors, flipped)
    expect(() => loadIndex(path)).toThrowError(/vectors\.f32 does not match its checksum/)
    writeFileSync(vectors, bytes)
    const meta = join(current(path), 'metadata.bin')
    const metaBytes = readFileSync(meta)
    metaBytes[metaBytes.length - 9] = (metaBytes[metaBytes.length - 9] as number) ^ 1
    writeFileSync(meta, metaBytes)
    expect(() => loadIndex(path)).toThrowError(/metadata\.bin does not match its checksum/)
    writeFileSync(join(current(path), 'manifest.json'), '{"format":"quarry-index","version":99}')
    expect(() => loadIndex(path)).toThrowError(/version 99/)
  })

  it('refuses a version 4 or 3 snapshot (never published) with INVALID_SNAPSHOT naming the version and what to do', () => {
    const path = join(dir, 'old')
    index.save(path)
    const manifestPath = join(current(path), 'manifest.json')
    const decoded = decodeManifest(readFileSync(manifestPath))
    if (decoded.kind !== 'sealed') throw new Error(`a fresh save's manifest is ${decoded.kind}`)
    const manifest = decoded.manifest as Manifest
    // Version 4: a sealed manifest, so only its version is wrong.
    writeFileSync(manifestPath, encodeManifest({ ...manifest, version: 4 }))
    const refusal = (): unknown => {
      try {
        loadIndex(path)
      } catch (error) {
        return error
      }
      return undefined
    }
    const v4 = refusal()
    expect(v4).toBeInstanceOf(QuarryError)
    expect(v4).toMatchObject({ code: 'INVALID_SNAPSHOT' })
    expect((v4 as QuarryError).message).toBe(`${path} is not a readable Quarry index: Quarry index version 4 is not supported by this Quarry (reads version 5). Restore it from a backup or save the index again with index.save(dir).`)
    // Version 3: a bare manifest without a seal; the version is what the message names.
    writeFileSync(manifestPath, JSON.stringify({ ...manifest, version: 3 }))
    expect(refusal()).toMatchObject({ code: 'INVALID_SNAPSHOT', message: expect.stringContaining('Quarry index version 3 is not supported by this Quarry (reads version 5)') as unknown })
    // The same manifest at version 5 loads again: the version alone was refused.
    writeFileSync(manifestPath, encodeManifest(manifest))
    expect(loadIndex(path).search({ vector: data[3] as number[], topK: 5 })).toEqual(index.search({ vector: data[3] as number[], topK: 5 }))
  })

  it('a crash during save leaves the previous snapshot current and loadable', () => {
    const path = join(dir, 'f')
    index.save(path)
    const before = loadIndex(path).search({ vector: data[3] as number[], topK: 5 })
    // A save that died before switching CURRENT: a half-written temporary folder and a complete
    // but never-promoted generation.
    mkdirSync(join(path, '.snapshot-000002.tmp-999'))
    writeFileSync(join(path, '.snapshot-000002.tmp-999', 'vectors.f32'), 'partial')
    mkdirSync(join(path, 'snapshot-000002'))
    writeFileSync(join(path, 'snapshot-000002', 'manifest.json'), '{}')
    expect(loadIndex(path).search({ vector: data[3] as number[], topK: 5 })).toEqual(before)
    // The next save cleans both up and becomes current.
    index.save(path)
    expect(readdirSync(path).sort()).toEqual(['CURRENT', 'snapshot-000002'])
  })
})

describe('texts and metadata of a loaded index', () => {
  const texts = ['plain ascii', 'café naïve', 'wide ☃ 𝄞 text', 'lone \ud800 surrogate', '']
  const build = () => {
    const index = createIndex({ dimensions: 2, dense: 'exact', text: { fields: { title: { boost: 2 } } } })
    texts.forEach((text, i) => index.add({ id: `s${i}`, vector: [1, i], text, metadata: { when: new Date(86_400_000 * i), n: i } }))
    index.add({ id: 'f', vector: [2, 1], text: { title: 'field title', body: 'wide ☃ body' }, metadata: { tags: ['a', 'b'] } })
    index.add({ id: 'none', vector: [3, 1], metadata: { flag: true } })
    return index
  }

  it('reads texts back exactly (latin1, UTF-16, lone surrogates, fields, none) and keeps stored Dates immutable', () => {
    const index = build()
    const path = join(dir, 'texts-a')
    index.save(path)
    const loaded = loadIndex(path)
    for (const id of index.ids()) expect(loaded.get(id)).toEqual(index.get(id))
    expect(loaded.get('s2')?.text).toBe('wide ☃ 𝄞 text')
    expect(loaded.get('s3')?.text).toBe('lone \ud800 surrogate')
    expect(loaded.get('none')?.text).toBeUndefined()
    const when = loaded.get('s1')?.metadata['when'] as Date
    expect(when).toBeInstanceOf(Date)
    expect(when.getTime()).toBe(86_400_000)
    expect(() => when.setTime(0)).toThrow(TypeError)
    expect(when.getTime()).toBe(86_400_000)
    expect(Object.isFrozen(loaded.get('s1')?.metadata)).toBe(true)
  })

  it('reads the same plain metadata of consecutive records as one frozen object (0 and -0, Dates and lists apart), and changing one changes no other', () => {
    const oracle = createIndex({ dimensions: 2, dense: 'exact' })
    const when = new Date(86_400_000)
    const metadata = [
      { source: 'f.md', page: 0 },
      { source: 'f.md', page: 0 },
      { source: 'f.md', page: -0 },
      { source: 'f.md', page: 0 },
      { source: 'g.md', page: 0 },
      { source: 'g.md', when },
      { source: 'g.md', when },
      { tags: ['f.md'] },
      { tags: ['f.md'] },
    ]
    metadata.forEach((m, i) => oracle.add({ id: `m${i}`, vector: [1, i], text: `chunk ${i}`, metadata: m }))
    const path = join(dir, 'shared-metadata')
    oracle.save(path)
    const loaded = loadIndex(path)
    const of = (id: string): Readonly<Record<string, unknown>> => loaded.get(id)?.metadata ?? {}
    for (const id of oracle.ids()) expect(loaded.get(id)).toEqual(oracle.get(id))
    expect(of('m1')).toBe(of('m0'))
    // -0 is not 0: m2 keeps its own object and its sign, and m3 does not take m2's.
    expect(of('m2')).not.toBe(of('m1'))
    expect(Object.is(of('m2')['page'], -0)).toBe(true)
    expect(of('m3')).not.toBe(of('m2'))
    expect(Object.is(of('m3')['page'], 0)).toBe(true)
    expect(of('m4')).not.toBe(of('m3'))
    expect(of('m6')).not.toBe(of('m5'))
    expect(of('m8')).not.toBe(of('m7'))
    expect(Object.isFrozen(of('m0'))).toBe(true)
    for (const index of [oracle, loaded]) {
      index.replaceMetadata('m0', { source: 'h.md', page: 1 })
      index.remove('m3')
    }
    expect(of('m1')).toEqual({ source: 'f.md', page: 0 })
    for (const id of oracle.ids()) expect(loaded.get(id)).toEqual(oracle.get(id))
    for (const value of ['f.md', 'g.md', 'h.md']) {
      const request = { text: 'chunk', topK: 10, filter: { op: 'eq' as const, field: 'source', value } }
      expect(loaded.search(request)).toEqual(oracle.search(request))
    }
  })

  it('a loaded text changed, removed, re-added or cleared reads as in an index that took the same changes', () => {
    const oracle = build()
    const path = join(dir, 'texts-b')
    oracle.save(path)
    const loaded = loadIndex(path)
    for (const index of [oracle, loaded]) {
      index.upsert({ id: 's0', vector: [1, 0], text: 'changed text' })
      index.remove('s1')
      index.remove('s2')
      index.add({ id: 's2', vector: [1, 5], text: 'back again', metadata: { n: 9 } })
      index.upsert({ id: 's4', vector: [1, 4], metadata: { n: 4 } })
      index.add({ id: 'new', vector: [4, 1], text: 'café new' })
    }
    expect([...loaded.ids()]).toEqual([...oracle.ids()])
    for (const id of oracle.ids()) expect(loaded.get(id)).toEqual(oracle.get(id))
    expect(loaded.get('s1')).toBeUndefined()
    expect(loaded.get('s4')?.text).toBeUndefined()
    for (const text of ['changed', 'again', 'café', 'wide', 'plain']) expect(loaded.search({ text, topK: 10 })).toEqual(oracle.search({ text, topK: 10 }))
  })
})

describe('loadIndex with the checksums computed on a worker thread', () => {
  const data = clustered(8, 2000, 8, 10)
  const index = createIndex({ dimensions: 8, metric: 'l2', dense: 'exact' })
  index.addMany(data.map((vector, i) => ({ id: `w${i}`, vector, text: `word${i % 17} other${i % 5} text`, metadata: { n: i, when: new Date(1e12 + i), tags: [`t${i % 3}`] } })))
  for (let i = 0; i < 2000; i += 7) index.remove(`w${i}`)
  const current = (path: string): string => join(path, readFileSync(join(path, 'CURRENT'), 'utf8').trim())
  /** Flips a byte of, truncates and extends each file in turn (by `by` bytes): each refused with an inline check's message; restored after. */
  const expectRefused = (path: string, names: readonly string[], by: number): void => {
    for (const name of names) {
      const file = join(current(path), name)
      const bytes = readFileSync(file)
      const flipped = Buffer.from(bytes)
      flipped[bytes.length >> 1] = (flipped[bytes.length >> 1] as number) ^ 0x40
      writeFileSync(file, flipped)
      const quoted = name.replace('.', '\\.')
      expect(() => loadIndex(path)).toThrowError(new RegExp(`${quoted} does not match its checksum`))
      writeFileSync(file, bytes.subarray(0, bytes.length - by))
      expect(() => loadIndex(path)).toThrowError(new RegExp(`${quoted} has .* bytes.*truncated`))
      writeFileSync(file, Buffer.concat([bytes, Buffer.alloc(by)]))
      expect(() => loadIndex(path)).toThrowError(new RegExp(`${quoted} has .* bytes.*truncated`))
      writeFileSync(file, bytes)
    }
  }
  let restore: () => void = () => undefined
  beforeAll(() => {
    restore = replaceBackgroundSumThreshold(0)
  })
  afterAll(() => restore())

  it('loads to exactly the same answers, records and metadata', () => {
    const path = join(dir, 'worker-a')
    index.save(path)
    const before = backgroundSumsStarted()
    const loaded = loadIndex(path)
    expect(backgroundSumsStarted()).toBe(before + 1)
    expect(loaded.size).toBe(index.size)
    for (const query of data.slice(0, 20)) {
      const request = { vector: query, text: 'word3 other2', topK: 10, filter: { op: 'lt' as const, field: 'n', value: 1500 } }
      expect(loaded.search(request)).toEqual(index.search(request))
    }
    for (const id of ['w1', 'w8', 'w1999']) expect(loaded.get(id)).toEqual(index.get(id))
    expect(loaded.get('w7')).toBeUndefined()
  })

  it('takes the worker prepareLoad booted ahead (one, however often called): same answers, and damage still refused', async () => {
    const path = join(dir, 'worker-prepared')
    index.save(path)
    const prepared = backgroundSumsPrepared()
    const started = backgroundSumsStarted()
    prepareLoad()
    prepareLoad()
    // Let it boot, as a server's imports do: the load then starts hashing at once.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const loaded = loadIndex(path)
    expect(backgroundSumsPrepared()).toBe(prepared + 1)
    expect(backgroundSumsStarted()).toBe(started + 1)
    for (const query of data.slice(0, 10)) {
      const request = { vector: query, text: 'word3 other2', topK: 10 }
      expect(loaded.search(request)).toEqual(index.search(request))
    }
    // The second call found one waiting and booted none: this load starts its own.
    loadIndex(path)
    expect(backgroundSumsPrepared()).toBe(prepared + 1)
    expect(backgroundSumsStarted()).toBe(started + 2)
    const file = join(current(path), 'texts.bin')
    const bytes = readFileSync(file)
    const flipped = Buffer.from(bytes)
    flipped[bytes.length >> 1] = (flipped[bytes.length >> 1] as number) ^ 0x40
    writeFileSync(file, flipped)
    prepareLoad()
    expect(() => loadIndex(path)).toThrowError(/texts\.bin does not match its checksum/)
    expect(backgroundSumsPrepared()).toBe(prepared + 2)
    writeFileSync(file, bytes)
  })

  it('refuses a corrupted, truncated or extended file with the same messages as an inline check', () => {
    const path = join(dir, 'worker-b')
    index.save(path)
    expectRefused(path, ['ids.bin', 'vectors.f32', 'texts.bin', 'metadata.bin', 'postings.bin', 'forward.bin', 'values.bin'], 8)
    expect(loadIndex(path).search({ vector: data[0] as number[], topK: 5 })).toEqual(index.search({ vector: data[0] as number[], topK: 5 }))
  })

  it('reads rows in shared memory on the worker (the main thread reads neither vectors nor norms): same bits, and damage is still refused', () => {
    // 3,000 × 48-d (576 KB of rows) keeps its rows in a shared WebAssembly memory: the worker reads them there.
    const wide = clustered(11, 3000, 48, 6)
    const exact = createIndex({ dimensions: 48, metric: 'cosine', dense: 'exact' })
    exact.addMany(wide.map((vector, i) => ({ id: `r${i}`, vector, text: `word${i % 13}`, metadata: { n: i } })))
    for (let i = 0; i < 3000; i += 11) exact.remove(`r${i}`)
    const path = join(dir, 'worker-rows')
    exact.save(path)
    const started = backgroundSumsStarted()
    const filled = backgroundSumsFilled()
    const loaded = loadIndex(path)
    expect(backgroundSumsStarted()).toBe(started + 1)
    expect(backgroundSumsFilled()).toBe(filled + 2)
    for (const id of ['r1', 'r17', 'r2999']) expect(loaded.get(id)).toEqual(exact.get(id))
    for (const query of wide.slice(0, 15)) {
      const request = { vector: query, topK: 10, filter: { op: 'gte' as const, field: 'n', value: 100 } }
      expect(loaded.search(request)).toEqual(exact.search(request))
    }
    expectRefused(path, ['vectors.f32', 'norms.f32'], 4)
    expect(loadIndex(path).search({ vector: wide[5] as number[], topK: 10 })).toEqual(exact.search({ vector: wide[5] as number[], topK: 10 }))
  })

  it('sums the HNSW graph there too (first, its bytes checked before the graph is returned): same answers, and a damaged graph is refused first', () => {
    const graphIndex = createIndex({ dimensions: 8, metric: 'l2' })
    graphIndex.addMany(data.slice(0, 1500).map((vector, i) => ({ id: `g${i}`, vector, text: `word${i % 17}` })))
    const path = join(dir, 'worker-c')
    graphIndex.save(path)
    const before = backgroundSumsStarted()
    const loaded = loadIndex(path)
    expect(backgroundSumsStarted()).toBe(before + 1)
    for (const query of data.slice(0, 20)) {
      const request = { vector: query, topK: 10 }
      const answer = loaded.search(request)
      expect(answer.stats.strategy).toBe('hnsw')
      expect(answer).toEqual(graphIndex.search(request))
    }
    const file = join(current(path), 'hnsw.bin')
    const bytes = readFileSync(file)
    const flipped = Buffer.from(bytes)
    flipped[bytes.length >> 1] = (flipped[bytes.length >> 1] as number) ^ 0x40
    writeFileSync(file, flipped)
    expect(() => loadIndex(path)).toThrowError(/hnsw\.bin does not match its checksum/)
    writeFileSync(file, bytes.subarray(0, bytes.length - 8))
    expect(() => loadIndex(path)).toThrowError(/hnsw\.bin has .* bytes.*truncated/)
    writeFileSync(file, bytes)
    expect(loadIndex(path).search({ vector: data[3] as number[], topK: 5 })).toEqual(graphIndex.search({ vector: data[3] as number[], topK: 5 }))
  })
})
