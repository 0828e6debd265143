import { cpSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder, readLog } from '@quarry/core'
import { createServer, type QuarryServerOptions } from '@quarry/adapters'
import { scratchDir } from '../support/engine-state.js'
import { chunkNames } from '../support/chunk-names.js'

/**
 * A server closed (`close()`) before its start has replayed the write-ahead log: before `listen`,
 * or while it replays (the port answers /readyz 503 then). The engines hold only part of the
 * folder: the close must take no checkpoint of them and leave the folder as it was, so the next
 * start serves every write. With the log whole and with a damaged one accepted (acceptLogLoss),
 * and with durability `none`, whose close otherwise takes a checkpoint.
 */
const embedder = createHashingEmbedder({ dimensions: 16 })
const DOC = 'corpora/c/documents/d'
const WRITES = 300
const roots: string[] = []
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true })
})

async function post(url: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(response.status, await response.text()).toBe(200)
}

/** A port free now (the server binds it at once: the test polls it while the start replays). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer()
    probe.on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** A crash image: a checkpoint, then WRITES chunks in the log only. */
let image: string
let logName: string
let log: Buffer
const written = Array.from({ length: WRITES }, (_, i) => `w${String(i).padStart(3, '0')}`)

beforeAll(async () => {
  const live = scratchDir('quarry-replay-live-')
  roots.push(live)
  const server = createServer({ embedder, dataDir: live, console: false, snapshotDelayMs: 3_600_000, checkpointBytes: 2 ** 40 })
  const { url } = await server.listen()
  await post(url, '/v1beta/corpora', { name: 'corpora/c' })
  await post(url, '/v1beta/corpora/c/documents', { name: DOC })
  await server.flush()
  for (const id of written) await post(url, `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/${id}`, data: { stringValue: id } })
  image = scratchDir('quarry-replay-image-')
  roots.push(image)
  cpSync(live, image, { recursive: true })
  rmSync(join(image, 'LOCK'))
  await server.close()
  logName = readdirSync(image).find((e) => /^wal-\d+\.log$/.test(e)) as string
  log = readFileSync(join(image, logName))
}, 120_000)

/** A copy of the crash image to start on (removed after the run). */
function imageCopy(): string {
  const folder = scratchDir('quarry-replay-')
  roots.push(folder)
  cpSync(image, folder, { recursive: true })
  return folder
}

/** What the next start on the folder serves (`acceptLogLoss` for a damaged log). */
async function nextStartServes(folder: string, acceptLogLoss = false): Promise<string[]> {
  const again = createServer({ embedder, dataDir: folder, console: false, acceptLogLoss })
  const { url } = await again.listen()
  const names = await chunkNames(url, DOC)
  await again.close()
  return names
}

describe('a close before the start replays the log', () => {
  it('leaves the folder as it was when the server never listened (durability none, whose close otherwise takes a checkpoint)', async () => {
    const folder = imageCopy()
    const server = createServer({ embedder, dataDir: folder, console: false, durability: 'none' })
    await server.close()
    // Its checkpoint still names the log, which the next start replays whole.
    expect(readdirSync(folder).sort()).toEqual(readdirSync(image).sort())
    expect(await nextStartServes(folder)).toEqual(written)
  })

  it('ends a start closed in the same turn as its listen: the port is let go, the folder left as it was', async () => {
    const folder = imageCopy()
    const port = await freePort()
    const server = createServer({ embedder, dataDir: folder, console: false, durability: 'none' })
    const listening = server.listen({ port }).then(
      () => undefined,
      (error: unknown) => error,
    )
    await server.close()
    expect(String(await listening)).toMatch(/closed before its write-ahead log was replayed: the data folder is as it was/)
    // Nothing answers on its port, and the folder is free and whole.
    expect(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)).toBe(0)
    expect(readdirSync(folder).sort()).toEqual(readdirSync(image).sort())
    expect(await nextStartServes(folder)).toEqual(written)
  })

  it('leaves a log that no checkpoint names alone (a start refuses it): a close writes no checkpoint over it', async () => {
    const folder = imageCopy()
    // CURRENT removed: the log's writes are in no checkpoint, and a start says so.
    for (const entry of readdirSync(folder)) if (entry === 'CURRENT' || entry.startsWith('snapshot-')) rmSync(join(folder, entry), { recursive: true })
    const refusal = /holds \d+ writes but no checkpoint names it/
    await expect(createServer({ embedder, dataDir: folder, console: false }).listen()).rejects.toThrow(refusal)
    const server = createServer({ embedder, dataDir: folder, console: false, durability: 'none' })
    await server.close()
    expect(readdirSync(folder)).toEqual([logName])
    await expect(createServer({ embedder, dataDir: folder, console: false }).listen()).rejects.toThrow(refusal)
  })
})

describe('a close while the start replays the log', () => {
  for (const durability of ['none', 'log'] as const) {
    for (const damaged of [false, true]) {
      it(`leaves the folder as it was (durability ${durability}, log ${damaged ? 'damaged, accepted' : 'whole'}): the next start serves every write`, async () => {
        const folder = imageCopy()
        // The last record cut off: the writes before it can be read.
        const lastFrame = (readLog(join(folder, logName), undefined).records.at(-1)?.length ?? 0) + 12
        if (damaged) truncateSync(join(folder, logName), log.length - lastFrame)
        const expected = damaged ? written.slice(0, -1) : written
        const options: QuarryServerOptions = { embedder, dataDir: folder, console: false, durability, acceptLogLoss: damaged, onInternalError: () => undefined }
        const server = createServer(options)
        const port = await freePort()
        let settled = false
        const listening = server.listen({ port }).then(
          () => undefined,
          (error: unknown) => error,
        ).finally(() => (settled = true))
        // Closed once the port answers 503: the replay is under way.
        for (;;) {
          const status = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)
          if (status === 503) break
          expect(status, 'the start ended before the test could close it mid-replay').toBe(0)
          if (settled) throw new Error(`the start failed before the test could close it: ${String(await listening)}`)
        }
        await server.close()
        const refused = await listening
        expect(await nextStartServes(folder, damaged)).toEqual(expected)
        // The start that was closed says so, and what the folder holds.
        expect(String(refused)).toMatch(/closed while replaying the write-ahead log \(\d+ of \d+ writes\): the data folder is as it was/)
      })
    }
  }
})
