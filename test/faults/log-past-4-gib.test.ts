import { closeSync, cpSync, ftruncateSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { WriteAheadLog, createHashingEmbedder, readLog } from '@quarry/core'
import { createServer } from '@quarry/adapters'
import { scratchDir } from '../support/engine-state.js'
import { chunkNames } from '../support/chunk-names.js'

/**
 * A write-ahead log past 4 GiB, the most a Buffer holds: reading it whole failed every start with
 * ERR_OUT_OF_RANGE, acceptLogLoss or not. Here a log's records are followed by zeros to 4.1 GiB
 * (a torn tail, which a crash can leave; with a last byte that is no zero, damage), made by
 * ftruncate as a sparse file: no disk is used, but every byte of the tail is read (it must be all
 * zeros to be a tear): well under a second on tmpfs, several seconds a read on a disk's file
 * system. So this runs in the full tier only.
 */
const SIZE = Math.round(4.1 * 2 ** 30)
const roots: string[] = []
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true })
})

/** Extends the file at `path` with zeros to {@link SIZE} bytes; false (and the file as it was) where the file system would store them. */
function extendSparse(path: string): boolean {
  const before = statSync(path).size
  const fd = openSync(path, 'r+')
  try {
    ftruncateSync(fd, SIZE)
    if (statSync(path).blocks * 512 < SIZE / 2) return true
    ftruncateSync(fd, before)
    return false
  } finally {
    closeSync(fd)
  }
}

const sparse = ((): boolean => {
  const dir = scratchDir('quarry-sparse-probe-')
  roots.push(dir)
  const probe = join(dir, 'probe')
  closeSync(openSync(probe, 'w'))
  return extendSparse(probe)
})()

const embedder = createHashingEmbedder({ dimensions: 16 })
const DOC = 'corpora/c/documents/d'
/** The chunks a crash image's log holds, every one acknowledged (sealed). */
const WRITTEN = ['w0', 'w1', 'w2']

/** A data folder as a crash left it: a checkpoint holding corpus and document, then {@link WRITTEN} in the log only. */
async function crashImage(): Promise<{ image: string; logName: string; end: number }> {
  const live = scratchDir('quarry-wal-4gib-live-')
  const image = scratchDir('quarry-wal-4gib-image-')
  roots.push(live, image)
  const server = createServer({ embedder, dataDir: live, console: false, snapshotDelayMs: 3_600_000, checkpointBytes: 2 ** 40 })
  const { url } = await server.listen()
  const post = async (path: string, body: unknown): Promise<void> => {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect(response.status, await response.text()).toBe(200)
  }
  await post('/v1beta/corpora', { name: 'corpora/c' })
  await post('/v1beta/corpora/c/documents', { name: DOC })
  await server.flush()
  for (const id of WRITTEN) await post(`/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/${id}`, data: { stringValue: id } })
  cpSync(live, image, { recursive: true })
  rmSync(join(image, 'LOCK'))
  await server.close()
  const logName = readdirSync(image).find((e) => /^wal-\d+\.log$/.test(e)) as string
  return { image, logName, end: statSync(join(image, logName)).size }
}

describe.skipIf(!sparse)('a write-ahead log past 4 GiB (zeros after its records)', () => {
  it('reads whole: its records, the tail dropped; resumed, it is cut back and appends follow its records', async () => {
    const dir = scratchDir('quarry-wal-4gib-')
    roots.push(dir)
    const path = join(dir, 'wal-1.log')
    const log = WriteAheadLog.create(path, 4)
    for (const p of ['first', 'second', 'third']) log.append(Buffer.from(p))
    await log.sync()
    log.close()
    const end = statSync(path).size
    expect(extendSparse(path)).toBe(true)
    const reading = readLog(path, log.identity)
    if (!reading.ok) throw new Error(reading.problem)
    expect(reading.records.map(String)).toEqual(['first', 'second', 'third'])
    expect(reading).toMatchObject({ droppedBytes: SIZE - end, end, seal: { bytes: end, records: 3 } })
    const resumed = WriteAheadLog.resume(path, reading)
    resumed.append(Buffer.from('fourth'))
    resumed.close()
    const again = readLog(path, log.identity)
    expect(again).toMatchObject({ ok: true, droppedBytes: 0, seal: { records: 4 } })
    expect(again.records.map(String)).toEqual(['first', 'second', 'third', 'fourth'])
  })

  it('lets a server start on it and serve every acknowledged write (no acceptLogLoss)', async () => {
    const { image, logName, end } = await crashImage()
    expect(extendSparse(join(image, logName))).toBe(true)
    const again = createServer({ embedder, dataDir: image, console: false, snapshotDelayMs: 3_600_000 })
    const { url } = await again.listen()
    try {
      expect(await chunkNames(url, DOC)).toEqual(WRITTEN)
      // The torn tail is cut off: appends go after the last whole record.
      expect(statSync(join(image, logName)).size).toBe(end)
    } finally {
      await again.close()
    }
  })

  it('with a byte past 4 GiB that is no zero: refused saying so, or with acceptLogLoss started from every write it holds', async () => {
    const { image, logName, end } = await crashImage()
    const path = join(image, logName)
    expect(extendSparse(path)).toBe(true)
    const fd = openSync(path, 'r+')
    try {
      writeSync(fd, Buffer.from([1]), 0, 1, SIZE - 1)
    } finally {
      closeSync(fd)
    }
    const damage = `has a damaged record header at byte ${end}, past its seal but followed by more`
    expect(readLog(path, undefined)).toMatchObject({ ok: false, problem: damage, sealed: WRITTEN.length })
    await expect(createServer({ embedder, dataDir: image, console: false }).listen()).rejects.toThrow(damage)
    const accepting = createServer({ embedder, dataDir: image, console: false, snapshotDelayMs: 3_600_000, acceptLogLoss: true })
    const { url } = await accepting.listen()
    try {
      expect(await chunkNames(url, DOC)).toEqual(WRITTEN)
      expect(accepting.logKeptAside).toMatch(/wal-\d+\.log\.damaged-/)
    } finally {
      await accepting.close()
    }
  })
})
