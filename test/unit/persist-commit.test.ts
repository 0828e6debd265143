import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder, writeGeneration, type GenerationFormat } from '@quarry/core'
import { createServer } from '@quarry/adapters'

/**
 * Once CURRENT names a new generation, the write has committed: nothing after the switch (removing
 * the generations it replaces, telling those waiting) may report it as failed. A server that took
 * a failed checkpoint for one that did not commit would drop the log the new checkpoint names and
 * go on appending acknowledged writes to a log no checkpoint names, lost at the next restart.
 */

/**
 * The folder whose removal fails (EBUSY, as a file held open elsewhere makes it on some systems),
 * and the folder whose listing fails (EMFILE: no descriptor left); none by default.
 */
const failing = vi.hoisted(() => ({ path: undefined as string | undefined, listing: undefined as string | undefined }))
const busy = (path: unknown): Error => Object.assign(new Error(`EBUSY: resource busy or locked, rm '${String(path)}'`), { code: 'EBUSY' })
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const rmSync: typeof fs.rmSync = (path, options) => {
    if (path === failing.path) throw busy(path)
    fs.rmSync(path, options)
  }
  const readdirSync = ((path: string, options?: unknown) => {
    if (path === failing.listing) throw Object.assign(new Error(`EMFILE: too many open files, scandir '${path}'`), { code: 'EMFILE' })
    return (fs.readdirSync as (p: string, o?: unknown) => unknown)(path, options)
  }) as typeof fs.readdirSync
  return { ...fs, rmSync, readdirSync, default: { ...fs, rmSync, readdirSync } }
})
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>()
  const rm: typeof fs.rm = async (path, options) => {
    if (path === failing.path) throw busy(path)
    return fs.rm(path, options)
  }
  return { ...fs, rm, default: { ...fs, rm } }
})

const root = mkdtempSync(join(tmpdir(), 'quarry-commit-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let count = 0
const scratch = (): string => join(root, `s${count++}`)
const generations = (dir: string): string[] => readdirSync(dir).filter((e) => /^snapshot-\d+$/.test(e)).sort()
const currentOf = (dir: string): string => readFileSync(join(dir, 'CURRENT'), 'latin1').trim()
const FORMAT: GenerationFormat = { format: 'quarry-test', version: 1, kind: 'test folder', remedy: 'Remove it.' }

describe('a generation is committed once CURRENT names it', () => {
  it('a replaced generation that cannot be removed, and a waiter that throws, leave the write committed; the next save removes the leftover', () => {
    const dir = scratch()
    const write = (text: string) => writeGeneration(dir, FORMAT, function* (out) {
      const file = out.create('a.txt')
      file.text(text)
      yield* file.finish()
      out.onSettled(() => {
        throw new Error('a waiter that fails')
      })
    })
    expect(write('one')).toBe(1)
    failing.path = join(dir, 'snapshot-000001')
    try {
      expect(write('two')).toBe(2)
    } finally {
      failing.path = undefined
    }
    expect(currentOf(dir)).toBe('snapshot-000002')
    expect(generations(dir)).toEqual(['snapshot-000001', 'snapshot-000002'])
    expect(write('three')).toBe(3)
    expect(generations(dir)).toEqual(['snapshot-000003'])
    expect(readFileSync(join(dir, 'snapshot-000003', 'a.txt'), 'utf8')).toBe('three')
  })

  it('a folder that cannot be listed once CURRENT was switched leaves the write committed', () => {
    const dir = scratch()
    const write = (text: string, failAfter: boolean) => writeGeneration(dir, FORMAT, function* (out) {
      const file = out.create('a.txt')
      file.text(text)
      yield* file.finish()
      // Told right after the switch: from then on, listing the folder fails.
      if (failAfter) out.onSettled(() => void (failing.listing = dir))
    })
    expect(write('one', false)).toBe(1)
    try {
      expect(write('two', true)).toBe(2)
    } finally {
      failing.listing = undefined
    }
    expect(currentOf(dir)).toBe('snapshot-000002')
    expect(readFileSync(join(dir, 'snapshot-000002', 'a.txt'), 'utf8')).toBe('two')
    expect(write('three', false)).toBe(3)
    expect(generations(dir)).toEqual(['snapshot-000003'])
  })

  it("a server's checkpoint whose replaced generation cannot be removed keeps the new log: a write acknowledged after it survives a crash", async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    const dataDir = scratch()
    const server = createServer({ embedder, dataDir })
    const { url } = await server.listen()
    const post = async (base: string, path: string, body: unknown): Promise<number> => (await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status
    try {
      expect(await post(url, '/v1beta/corpora', { name: 'corpora/before' })).toBe(200)
      await server.flush()
      expect(await post(url, '/v1beta/corpora', { name: 'corpora/during' })).toBe(200)
      const replaced = currentOf(dataDir)
      failing.path = join(dataDir, replaced)
      try {
        await server.flush()
      } finally {
        failing.path = undefined
      }
      expect(currentOf(dataDir)).not.toBe(replaced)
      expect(existsSync(join(dataDir, replaced))).toBe(true)
      expect(await post(url, '/v1beta/corpora', { name: 'corpora/after' })).toBe(200)
      // The folder as a crash would leave it now: every acknowledged write must come back.
      const crashed = scratch()
      cpSync(dataDir, crashed, { recursive: true })
      rmSync(join(crashed, 'LOCK'), { force: true })
      const restarted = createServer({ embedder, dataDir: crashed })
      const again = await restarted.listen()
      try {
        const listed = (await (await fetch(`${again.url}/v1beta/corpora`)).json()) as { corpora?: { name: string }[] }
        expect((listed.corpora ?? []).map((c) => c.name)).toEqual(['corpora/before', 'corpora/during', 'corpora/after'])
        // Its next checkpoint removes the generation left behind.
        expect(await post(again.url, '/v1beta/corpora', { name: 'corpora/later' })).toBe(200)
        await restarted.flush()
        expect(generations(crashed)).toEqual([currentOf(crashed)])
      } finally {
        await restarted.close()
      }
    } finally {
      await server.close()
    }
  })
})
