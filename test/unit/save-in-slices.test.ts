import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createIndex, loadIndex, QuarryError, writeGeneration, writeGenerationInSlices, type GenerationFormat, type Steps } from '@quarry/core'
import { clustered } from '../support/random.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-slices-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const FORMAT: GenerationFormat = { format: 'test-slices', version: 1, kind: 'test folder', remedy: 'Write it again.' }

/** A manifest without its own generation-specific fields: what two writes of the same state must share. */
function manifestFiles(path: string): unknown {
  const current = readFileSync(join(path, 'CURRENT'), 'latin1').trim()
  const files = (JSON.parse(readFileSync(join(path, current, 'manifest.json'), 'utf8')) as { manifest: { files: Record<string, unknown> } }).manifest.files
  expect(Object.keys(files).length).toBeGreaterThan(0)
  return files
}

describe('index.saveInSlices', () => {
  const data = clustered(11, 4000, 24, 16)
  const index = createIndex({ dimensions: 24, metric: 'cosine' })
  index.addMany(data.map((vector, i) => ({ id: `v${i}`, vector, text: `passage ${i} about cluster ${i % 16}`, metadata: { n: i, odd: i % 2 === 1 } })))
  for (let i = 0; i < 4000; i += 7) index.remove(`v${i}`)

  it('writes the same files (sizes and sha256) as save, and loads back to the same answers', async () => {
    index.save(join(dir, 'sync'))
    await index.saveInSlices(join(dir, 'sliced'), { sliceMs: 1 })
    const sync = manifestFiles(join(dir, 'sync')) as Record<string, { sha256: string }>
    const sliced = manifestFiles(join(dir, 'sliced')) as Record<string, { sha256: string }>
    // hnswlib's graph file is written the same way by both; every file is byte for byte the same.
    expect(sliced).toEqual(sync)
    expect(Object.keys(sliced).sort()).toEqual(['forward.bin', 'hnsw.bin', 'ids.bin', 'metadata.bin', 'norms.f32', 'postings.bin', 'texts.bin', 'values.bin', 'vectors.f32'])
    const loaded = loadIndex(join(dir, 'sliced'))
    for (const query of data.slice(0, 20)) expect(loaded.search({ vector: query, topK: 10 })).toEqual(index.search({ vector: query, topK: 10 }))
    expect(loaded.search({ text: 'cluster 3', topK: 10 })).toEqual(index.search({ text: 'cluster 3', topK: 10 }))
  })

  it('lets the event loop answer searches between slices, and refuses changes (BUSY) until it settles', async () => {
    const query = data[1] as number[]
    const expected = index.search({ vector: query, topK: 5 })
    let turns = 0
    const answers: unknown[] = []
    let saving = true
    const tick = (): void => {
      if (!saving) return
      turns++
      answers.push(index.search({ vector: query, topK: 5 }))
      setImmediate(tick)
    }
    setImmediate(tick)
    const save = index.saveInSlices(join(dir, 'busy'), { sliceMs: 1 })
    expect(index.saving).toBe(true)
    let refused: unknown
    try {
      index.upsert({ id: 'new', vector: query })
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(QuarryError)
    expect((refused as QuarryError).code).toBe('BUSY')
    expect(() => index.remove('v1')).toThrowError(/saveInSlices of this index is under way; await it/)
    await save
    saving = false
    expect(index.saving).toBe(false)
    // The loop turned while the save ran, and every search it answered was the index's answer.
    expect(turns).toBeGreaterThan(3)
    for (const answer of answers) expect(answer).toEqual(expected)
    index.upsert({ id: 'after', vector: query })
    expect(index.remove('after')).toBe(true)
  })
})

describe('writeGenerationInSlices', () => {
  function* files(out: Parameters<Parameters<typeof writeGeneration>[2]>[0], fail: boolean): Steps<Record<string, unknown>> {
    for (let i = 0; i < 3; i++) {
      const f = out.create(`part-${i}.txt`)
      for (let line = 0; line < 2000; line++) {
        f.text(`line ${line} of part ${i}\n`)
        yield
      }
      yield* f.finish()
      if (fail && i === 1) yield { sync: () => undefined, async: () => Promise.reject(new Error('disk went away')) }
    }
    return { parts: 3 }
  }

  it('writes what writeGeneration writes; a failing blocking call leaves the last generation current and no debris', async () => {
    const a = join(dir, 'gen-a')
    const b = join(dir, 'gen-b')
    expect(writeGeneration(a, FORMAT, (out) => files(out, false))).toBe(1)
    expect(await writeGenerationInSlices(b, FORMAT, (out) => files(out, false), { sliceMs: 1 })).toBe(1)
    expect(manifestFiles(b)).toEqual(manifestFiles(a))
    await expect(writeGenerationInSlices(b, FORMAT, (out) => files(out, true))).rejects.toThrowError('disk went away')
    expect(readdirSync(b).sort()).toEqual(['CURRENT', 'snapshot-000001'])
    expect(await writeGenerationInSlices(b, FORMAT, (out) => files(out, false))).toBe(2)
    expect(readdirSync(b).sort()).toEqual(['CURRENT', 'snapshot-000002'])
  })
})
