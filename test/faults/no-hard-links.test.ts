import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer } from '@quarry/adapters'
import { DAMAGED_DOC, damagedLogImage, READABLE_CHUNKS } from '../support/damaged-log.js'

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

async function names(url: string): Promise<string[]> {
  const listed = await fetch(`${url}/v1beta/${DAMAGED_DOC}/chunks`)
  const chunks = ((await listed.json()) as { chunks?: { name: string }[] }).chunks ?? []
  return chunks.map((c) => c.name.split('/').pop() as string)
}

describe('keeping a damaged log aside where the file system has no hard links', () => {
  it('copies it: the copy holds the bytes the log had, and the writes it held are served', async () => {
    const { image, logName, readableBytes } = await damagedLogImage(root, 'copied', embedder)
    fault.links = 0
    fault.copies = 0
    const server = createServer({ embedder, dataDir: image, acceptLogLoss: true })
    const { url } = await server.listen()
    expect(fault.links).toBe(1)
    expect(fault.copies).toBe(1)
    expect(server.logKeptAside).toMatch(new RegExp(`${logName}\\.damaged-`))
    expect(readFileSync(server.logKeptAside as string)).toEqual(readableBytes)
    expect(await names(url)).toEqual(READABLE_CHUNKS)
    await server.close()
    // The next plain start needs no acceptance: the checkpoint holds the replayed writes.
    const plain = createServer({ embedder, dataDir: image })
    expect(await names((await plain.listen()).url)).toEqual(READABLE_CHUNKS)
    await plain.close()
  })

  it('stops the start when the copy fails, removing the part written, with the log where it was', async () => {
    const { image, logName, readableBytes } = await damagedLogImage(root, 'copy-fails', embedder)
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
    expect(await names(url)).toEqual(READABLE_CHUNKS)
    await server.close()
  })
})
