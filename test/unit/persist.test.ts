import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createIndex, loadIndex, QuarryError } from '@quarry/core'
import { clustered } from '../support/random.js'

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

  it('refuses a missing or corrupt snapshot with INVALID_SNAPSHOT', () => {
    expect(() => loadIndex(join(dir, 'missing'))).toThrowError(expect.objectContaining({ code: 'INVALID_SNAPSHOT' }) as Error)
    const path = join(dir, 'e')
    index.save(path)
    writeFileSync(join(path, 'vectors.f32'), new Uint8Array(12))
    expect(() => loadIndex(path)).toThrow(QuarryError)
    writeFileSync(join(path, 'manifest.json'), '{"format":"quarry-index","version":99}')
    expect(() => loadIndex(path)).toThrowError(/version 99/)
  })
})
