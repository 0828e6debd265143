import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'
import { damagedLogImage, READABLE_CHUNKS } from '../support/damaged-log.js'
import { mountSmallDisk, unmountSmallDisk } from '../support/small-disk.js'
import { thrown as thrownBy } from '../support/thrown.js'

const embedder = createHashingEmbedder({ dimensions: 16 })
const root = mkdtempSync(join(tmpdir(), 'quarry-faults-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; retryAfter: string | null }> {
  const response = await fetch(`${base}${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  return { status: response.status, json: (await response.json()) as Record<string, unknown>, retryAfter: response.headers.get('retry-after') }
}

const disk = mountSmallDisk(root, 'disk-full test')
afterAll(() => unmountSmallDisk(disk))

/** Fills the disk: writes until the file system says it is full; returns the filler to remove. */
function fill(dir: string): string {
  const filler = join(dir, 'filler')
  const block = Buffer.alloc(64 * 1024, 1)
  let n = 0
  try {
    for (;;) writeFileSync(filler, block, { flag: n++ === 0 ? 'w' : 'a' })
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC')
  }
  // The last few bytes too: small appends must fail as well.
  try {
    for (;;) writeFileSync(filler, Buffer.alloc(64, 1), { flag: 'a' })
  } catch {
    // full
  }
  return filler
}

const DOC = 'corpora/disk/documents/d'
// 12 KB of text: a log record needs fresh pages, not the slack of the log's last one.
const chunk = (id: string) => ({ name: `${DOC}/chunks/${id}`, data: { stringValue: `text of ${id} ${'x'.repeat(12_000)}` } })
const names = async (base: string) => ((await call(base, 'GET', `/v1beta/${DOC}/chunks?pageSize=100`)).json['chunks'] as { name: string }[] | undefined ?? []).map((c) => c.name.slice(DOC.length + 8))

describe.skipIf(disk === undefined)('a full disk under quarry serve --data (durability log)', () => {
  it('refuses writes with RESOURCE_EXHAUSTED, keeps memory and disk equal and reads working, and resumes when space returns', async () => {
    const dataDir = join(disk as string, 'data')
    let server: QuarryServer = createServer({ embedder, dataDir, onInternalError: () => undefined })
    let { url } = await server.listen()
    expect((await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/disk' })).status).toBe(200)
    expect((await call(url, 'POST', '/v1beta/corpora/disk/documents', { name: DOC })).status).toBe(200)
    expect((await call(url, 'POST', `/v1beta/${DOC}/chunks`, chunk('before'))).status).toBe(200)

    const filler = fill(disk as string)
    const refused = await call(url, 'POST', `/v1beta/${DOC}/chunks`, chunk('while-full'))
    expect(refused.status).toBe(429)
    expect(refused.json['error']).toMatchObject({ status: 'RESOURCE_EXHAUSTED', message: "The data folder's disk is full: the write was not applied. Free space and retry; reads keep working." })
    // Memory was put back to what the disk holds: the refused chunk is not served.
    expect(await names(url)).toEqual(['before'])
    expect((await call(url, 'GET', `/v1beta/${DOC}/chunks/before`)).status).toBe(200)

    rmSync(filler)
    expect((await call(url, 'POST', `/v1beta/${DOC}/chunks`, chunk('after'))).status).toBe(200)
    expect(await names(url)).toEqual(['before', 'after'])
    await server.close()

    server = createServer({ embedder, dataDir })
    ;({ url } = await server.listen())
    expect(await names(url)).toEqual(['before', 'after'])
    await server.close()
  })

  it('a start on a full disk says which file it could not create and what the folder needs', () => {
    const dataDir = join(disk as string, 'full-start')
    mkdirSync(dataDir)
    const filler = fill(disk as string)
    try {
      // It was the bare "ENOSPC: no space left on device, write".
      const error = thrownBy(() => createServer({ embedder, dataDir }))
      expect(error).toMatchObject({ code: 'ENOSPC', message: `cannot take the lock of ${dataDir}: creating ${join(dataDir, 'LOCK')} failed (ENOSPC); the folder must be writable by this process, on a disk with free space.` })
    } finally {
      rmSync(filler)
    }
  })
})

describe.skipIf(disk === undefined)('accepting a damaged log on a full disk (acceptLogLoss)', () => {
  it('loses none of the writes it could read when the start fails: the log keeps its name until a checkpoint holds them', async () => {
    // A crash image: a checkpoint, then 6 acknowledged chunks in the log only (its LOCK left out), the last cut off.
    const { image, logName, readableBytes } = await damagedLogImage(disk as string, 'image', embedder)
    const readable = [...READABLE_CHUNKS]

    // Accepted on a full disk: the writes are replayed, but the checkpoint that would hold them cannot be written.
    const failed = createServer({ embedder, dataDir: image, acceptLogLoss: true, onInternalError: () => undefined })
    const filler = fill(disk as string)
    await expect(failed.listen()).rejects.toThrow(/no space|ENOSPC|disk is full/i)
    await failed.close()
    rmSync(filler)
    // The log is still where the checkpoint names it: the next start replays the same 5 writes.
    const accepted = createServer({ embedder, dataDir: image, acceptLogLoss: true })
    const started = await accepted.listen()
    expect(await names(started.url)).toEqual(readable)
    // Kept aside with the bytes the log had; the log itself gone once the checkpoint was confirmed.
    const aside = readdirSync(image).filter((e) => e.startsWith(`${logName}.damaged-`))
    expect(aside.length).toBeGreaterThan(0)
    for (const name of aside) expect(readFileSync(join(image, name))).toEqual(readableBytes)
    expect(readdirSync(image)).not.toContain(logName)
    await accepted.close()
    const plain = createServer({ embedder, dataDir: image })
    expect(await names((await plain.listen()).url)).toEqual(readable)
    await plain.close()
  })
})

describe('checkpoints that keep failing (durability log)', () => {
  it('are tried again backed off, not at once, and the writes stay answered and kept', async () => {
    const dataDir = join(root, 'failing-checkpoints')
    const errors: unknown[] = []
    // checkpointBytes 1: every write asks for a checkpoint at once.
    let server = createServer({ embedder, dataDir, checkpointBytes: 1, console: false, onInternalError: (e) => errors.push(e) })
    let { url } = await server.listen()
    // The next checkpoint's log cannot be made: its name is taken by a folder (root ignores permissions).
    const current = readdirSync(dataDir).filter((f) => /^wal-\d+\.log$/.test(f)).sort().at(-1) as string
    const blocked = join(dataDir, `wal-${String(Number(current.slice(4, 10)) + 1).padStart(6, '0')}.log`)
    mkdirSync(blocked)
    expect((await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/kept' })).status).toBe(200)
    await new Promise((r) => setTimeout(r, 1500))
    // Retried at once, the log past checkpointBytes made hundreds of tries (and errors) a second.
    expect(errors.length).toBeGreaterThanOrEqual(1)
    expect(errors.length).toBeLessThanOrEqual(3)
    expect((await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/kept-too' })).status).toBe(200)
    await new Promise((r) => setTimeout(r, 200))
    // A write does not bring the backed-off try forward.
    expect(errors.length).toBeLessThanOrEqual(3)
    rmSync(blocked, { recursive: true })
    await server.flush()
    await server.close()
    server = createServer({ embedder, dataDir, console: false })
    ;({ url } = await server.listen())
    const listed = (await call(url, 'GET', '/v1beta/corpora')).json['corpora'] as { name: string }[]
    expect(listed.map((c) => c.name).sort()).toEqual(['corpora/kept', 'corpora/kept-too'])
    await server.close()
  })
})

describe('a data folder removed under the server', () => {
  it.each([
    ['the whole folder', (dir: string) => rmSync(dir, { recursive: true, force: true })],
    ['its LOCK alone', (dir: string) => rmSync(join(dir, 'LOCK'))],
  ] as const)('%s: writes are refused with 503 UNAVAILABLE, reads go on, and nothing is written into the path', async (_, remove) => {
    const dataDir = join(root, `removed-${_.length}`)
    const server = createServer({ embedder, dataDir, console: false, onInternalError: () => undefined })
    const { url } = await server.listen()
    expect((await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/before' })).status).toBe(200)
    remove(dataDir)
    // Answered 200 before: into a log no restart reads, while a second server could start on the path.
    const refused = await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/after' })
    expect(refused.status).toBe(503)
    expect(refused.json['error']).toMatchObject({ status: 'UNAVAILABLE', message: "The server's data folder, its write-ahead log or its LOCK was removed while the server ran: writes are refused, since a restart would not find them. Restart the server; reads keep working until then." })
    expect((await call(url, 'GET', '/v1beta/corpora/before')).status).toBe(200)
    expect((await call(url, 'GET', '/readyz')).json).toMatchObject({ ready: true, writes: 'refused' })
    // A checkpoint would have made the folder anew (or written beside another server's LOCK).
    const flushed = server.flush()
    if (_ === 'the whole folder') {
      await expect(flushed).rejects.toThrow(/cannot open the write-ahead log/)
      expect(existsSync(dataDir)).toBe(false)
    } else {
      await expect(flushed).rejects.toMatchObject({ code: 'LOCKED' })
      expect(readdirSync(dataDir).filter((f) => f === 'LOCK' || f.startsWith('snapshot-000002'))).toEqual([])
    }
    await server.close().catch(() => undefined)
  })
})

describe('a first checkpoint cut short before CURRENT', () => {
  it('is completed by the next start, which serves its state; a damaged one is still refused', async () => {
    const dataDir = join(root, 'first-start')
    const first = createServer({ embedder, dataDir, console: false })
    await first.listen()
    // The folder as a kill between the first generation's rename and CURRENT leaves it.
    const cut = join(root, 'first-start-cut')
    cpSync(dataDir, cut, { recursive: true })
    await first.close()
    rmSync(join(cut, 'CURRENT'))
    rmSync(join(cut, 'LOCK'))
    expect(readdirSync(cut).filter((f) => f.startsWith('snapshot-'))).toEqual(['snapshot-000001'])
    const damaged = join(root, 'first-start-damaged')
    cpSync(cut, damaged, { recursive: true })
    writeFileSync(join(damaged, 'snapshot-000001', 'manifest.json'), '{}')
    // Refused before ("CURRENT is missing although snapshot-000001 exists"), start after start.
    const again = createServer({ embedder, dataDir: cut, console: false })
    const { url } = await again.listen()
    expect(readFileSync(join(cut, 'CURRENT'), 'latin1')).toMatch(/^snapshot-\d+\n$/)
    expect((await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/after' })).status).toBe(200)
    await again.close()
    expect(() => createServer({ embedder, dataDir: damaged, console: false })).toThrow(/CURRENT is missing although snapshot-000001 exists/)
  })
})

describe('a bounded number of requests in flight', () => {
  it('answers 429 RESOURCE_EXHAUSTED with Retry-After beyond maxInFlight, and serves the held ones', async () => {
    let release = (): void => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow = { name: 'slow', dimensions: 4, embed: async (texts: readonly string[]) => (await gate, texts.map(() => new Float32Array([1, 0, 0, 0]))) }
    const server = createServer({ embedder: slow, maxInFlight: 2 })
    const { url } = await server.listen()
    await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/load' })
    await call(url, 'POST', '/v1beta/corpora/load/documents', { name: 'corpora/load/documents/d' })
    const held = [0, 1].map((i) => call(url, 'POST', '/v1beta/corpora/load/documents/d/chunks', { name: `corpora/load/documents/d/chunks/c${i}`, data: { stringValue: 'x' } }))
    await new Promise((r) => setTimeout(r, 100))
    const over = await Promise.all([2, 3, 4].map(() => call(url, 'GET', '/v1beta/corpora')))
    for (const o of over) {
      expect(o.status).toBe(429)
      expect(o.retryAfter).toBe('1')
      expect(o.json['error']).toMatchObject({ status: 'RESOURCE_EXHAUSTED', message: 'The server is holding 2 requests already (maxInFlight); retry shortly, or send fewer at once.' })
    }
    release()
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200])
    expect((await call(url, 'GET', '/v1beta/corpora')).status).toBe(200)
    await server.close()
  })
})

describe('checkpoints under concurrent writes (durability log)', () => {
  it('answers every write and keeps every one when checkpoints start new logs while writes wait for their sync', async () => {
    const dataDir = join(root, 'checkpoints')
    // A checkpoint every ~10 kB of log: dozens of them during the run.
    let server = createServer({ embedder, dataDir, checkpointBytes: 10_000 })
    let { url } = await server.listen()
    await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/ckpt' })
    await call(url, 'POST', '/v1beta/corpora/ckpt/documents', { name: 'corpora/ckpt/documents/d' })
    const statuses = await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        const out: number[] = []
        for (let i = 0; i < 25; i++) out.push((await call(url, 'POST', '/v1beta/corpora/ckpt/documents/d/chunks', { name: `corpora/ckpt/documents/d/chunks/w${w}-${i}`, data: { stringValue: `writer ${w} chunk ${i}` } })).status)
        return out
      }),
    )
    expect(statuses.flat().filter((s) => s !== 200)).toEqual([])
    // Checkpoints happened (the first generation is taken at start), and the folder keeps only the newest.
    const generations = readdirSync(dataDir).filter((e) => /^snapshot-\d+$/.test(e))
    expect(generations).toHaveLength(1)
    expect(Number(generations[0]?.slice('snapshot-'.length))).toBeGreaterThan(3)
    await server.close()
    server = createServer({ embedder, dataDir })
    ;({ url } = await server.listen())
    const listed: string[] = []
    let token = ''
    do {
      const page = (await call(url, 'GET', `/v1beta/corpora/ckpt/documents/d/chunks?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)).json as { chunks?: { name: string }[]; nextPageToken?: string }
      listed.push(...(page.chunks ?? []).map((c) => c.name))
      token = page.nextPageToken ?? ''
    } while (token !== '')
    expect(listed.length).toBe(16 * 25)
    expect(new Set(listed).size).toBe(16 * 25)
    await server.close()
  })
})
