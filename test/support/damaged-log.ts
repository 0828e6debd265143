import { cpSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { readLog, type Embedder } from '@quarry/core'
import { createServer } from '@quarry/adapters'

/** The document whose chunks a damaged-log image holds. */
export const DAMAGED_DOC = 'corpora/disk/documents/d'

/** The chunks of {@link DAMAGED_DOC} a damaged-log image's log can still be read for. */
export const READABLE_CHUNKS: readonly string[] = ['l0', 'l1', 'l2', 'l3', 'l4']

export interface DamagedLogImage {
  /** The data folder, as a crash left it (no LOCK). */
  readonly image: string
  /** The log's file name in it. */
  readonly logName: string
  /** The log's bytes as left: every record but the cut one. */
  readonly readableBytes: Buffer
}

async function post(base: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await response.arrayBuffer()
  return response.status
}

/**
 * A crash image in `dir/name`: a checkpoint holding corpus and document, then 6 acknowledged
 * chunks (l0 to l5) in the write-ahead log only, the last record cut off, so that the log reads
 * as damaged and 5 of its writes can be read. Made by a real server (in `dir/name-live`, removed).
 */
export async function damagedLogImage(dir: string, name: string, embedder: Embedder): Promise<DamagedLogImage> {
  const live = join(dir, `${name}-live`)
  const server = createServer({ embedder, dataDir: live, snapshotDelayMs: 3_600_000, checkpointBytes: 2 ** 40 })
  const { url } = await server.listen()
  expect(await post(url, '/v1beta/corpora', { name: 'corpora/disk' })).toBe(200)
  expect(await post(url, '/v1beta/corpora/disk/documents', { name: DAMAGED_DOC })).toBe(200)
  await server.flush()
  for (const id of [...READABLE_CHUNKS, 'l5']) expect(await post(url, `/v1beta/${DAMAGED_DOC}/chunks`, { name: `${DAMAGED_DOC}/chunks/${id}`, data: { stringValue: id } })).toBe(200)
  const image = join(dir, name)
  cpSync(live, image, { recursive: true })
  rmSync(join(image, 'LOCK'))
  await server.close()
  rmSync(live, { recursive: true })
  const logName = readdirSync(image).find((e) => /^wal-\d+\.log$/.test(e)) as string
  const log = readFileSync(join(image, logName))
  // A record's frame is its bytes and a 12-byte header (its length and two CRC-32s).
  const lastFrame = (readLog(join(image, logName), undefined).records.at(-1)?.length ?? 0) + 12
  truncateSync(join(image, logName), log.length - lastFrame)
  return { image, logName, readableBytes: log.subarray(0, log.length - lastFrame) }
}
