import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder, readLog } from '@quarry/core'
import { createServer } from '@quarry/adapters'

/**
 * A damaged write-ahead log accepted with acceptLogLoss is kept aside under a second name: a hard
 * link where the file system has them (no bytes written, so it works on a full disk), else a copy.
 * Here the file system has no hard links (EXDEV, as across mounts; EPERM on some network and FAT
 * file systems): the copy must hold the log's bytes, and a copy that fails must leave nothing half
 * written and stop the start, with the log where it was.
 */
const fault = vi.hoisted(() => ({ links: 0, copyFails: false, copies: 0 }))
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const linkSync: typeof fs.linkSync = (existing, to) => {
    if (String(to).includes('.damaged-')) {
      fault.links++
      throw Object.assign(new Error(`EXDEV: cross-device link not permitted, link '${String(existing)}' -> '${String(to)}'`), { code: 'EXDEV' })
    }
    fs.linkSync(existing, to)
  }
  const copyFileSync: typeof fs.copyFileSync = (from, to, mode) => {
    if (String(to).includes('.damaged-')) {
      fault.copies++
      if (fault.copyFails) {
        // Part of the file written, then the disk fills.
        fs.writeFileSync(to, fs.readFileSync(from).subarray(0, 10))
        throw Object.assign(new Error(`ENOSPC: no space left on device, copyfile '${String(from)}' -> '${String(to)}'`), { code: 'ENOSPC' })
      }
    }
    fs.copyFileSync(from, to, mode)
  }
  return { ...fs, linkSync, copyFileSync, default: { ...fs, linkSync, copyFileSync } }
})

const embedder = createHashingEmbedder({ dimensions: 16 })
const root = mkdtempSync(join(tmpdir(), 'quarry-no-links-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const DOC = 'corpora/links/documents/d'

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}

async function names(url: string): Promise<string[]> {
  const listed = await call(url, 'GET', `/v1beta/${DOC}/chunks`)
  return ((listed.json['chunks'] as { name: string }[] | undefined) ?? []).map((c) => c.name.split('/').pop() as string)
}

/** A crash image: a checkpoint, then 6 acknowledged chunks in the log only, the last one cut off; the log's readable bytes. */
async function crashImage(name: string): Promise<{ image: string; logName: string; readableBytes: Buffer }> {
  const live = join(root, `${name}-live`)
  const server = createServer({ embedder, dataDir: live, snapshotDelayMs: 3_600_000, checkpointBytes: 2 ** 40 })
  const { url } = await server.listen()
  expect((await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/links' })).status).toBe(200)
  expect((await call(url, 'POST', '/v1beta/corpora/links/documents', { name: DOC })).status).toBe(200)
  await server.flush()
  for (const id of ['l0', 'l1', 'l2', 'l3', 'l4', 'l5']) expect((await call(url, 'POST', `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/${id}`, data: { stringValue: id } })).status).toBe(200)
  const image = join(root, name)
  cpSync(live, image, { recursive: true })
  rmSync(join(image, 'LOCK'))
  await server.close()
  const logName = readdirSync(image).find((e) => /^wal-\d+\.log$/.test(e)) as string
  const log = readFileSync(join(image, logName))
  const lastFrame = (readLog(join(image, logName), undefined).records.at(-1)?.length ?? 0) + 12
  truncateSync(join(image, logName), log.length - lastFrame)
  return { image, logName, readableBytes: log.subarray(0, log.length - lastFrame) }
}

describe('keeping a damaged log aside where the file system has no hard links', () => {
  it('copies it: the copy holds the bytes the log had, and the writes it held are served', async () => {
    const { image, logName, readableBytes } = await crashImage('copied')
    fault.links = 0
    fault.copies = 0
    const server = createServer({ embedder, dataDir: image, acceptLogLoss: true })
    const { url } = await server.listen()
    expect(fault.links).toBe(1)
    expect(fault.copies).toBe(1)
    expect(server.logKeptAside).toMatch(new RegExp(`${logName}\\.damaged-`))
    expect(readFileSync(server.logKeptAside as string)).toEqual(readableBytes)
    expect(await names(url)).toEqual(['l0', 'l1', 'l2', 'l3', 'l4'])
    await server.close()
    // The next plain start needs no acceptance: the checkpoint holds the replayed writes.
    const plain = createServer({ embedder, dataDir: image })
    expect(await names((await plain.listen()).url)).toEqual(['l0', 'l1', 'l2', 'l3', 'l4'])
    await plain.close()
  })

  it('stops the start when the copy fails, removing the part written, with the log where it was', async () => {
    const { image, logName, readableBytes } = await crashImage('copy-fails')
    fault.copyFails = true
    try {
      const failed = createServer({ embedder, dataDir: image, acceptLogLoss: true, onInternalError: () => undefined })
      await expect(failed.listen()).rejects.toThrow(/ENOSPC|no space/)
      await failed.close()
    } finally {
      fault.copyFails = false
    }
    expect(readdirSync(image).filter((e) => e.includes('.damaged-'))).toEqual([])
    expect(readFileSync(join(image, logName))).toEqual(readableBytes)
    // Once the copy can be made, the same start keeps the same 5 writes.
    const server = createServer({ embedder, dataDir: image, acceptLogLoss: true })
    const { url } = await server.listen()
    expect(existsSync(server.logKeptAside as string)).toBe(true)
    expect(await names(url)).toEqual(['l0', 'l1', 'l2', 'l3', 'l4'])
    await server.close()
  })
})
