import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { QuarryError, createHashingEmbedder, readLog } from '@quarry/core'
import { createServer, seededRandomId, steppingClock, type QuarryServerOptions } from '@quarry/adapters'
import { engineState, scratchDir } from '../support/engine-state.js'
import { runs } from '../support/runs.js'
import { full } from '../support/tier.js'

/**
 * Issue 41, "the log is part of the sealed state": a data folder as a crash leaves it (a
 * checkpoint, then acknowledged writes in the write-ahead log) has its log cut or one byte of it
 * changed; a restart either rebuilds exactly the acknowledged state or refuses to start, saying what
 * would be lost. It never starts with less. The servers run in this process, through the same
 * durable layer `quarry serve` uses.
 */
const embedder = createHashingEmbedder({ dimensions: 16 })
const roots: string[] = []
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true })
})

function options(dataDir: string): QuarryServerOptions {
  return {
    embedder,
    dataDir,
    console: false,
    // No checkpoint but the ones the test asks for: the log keeps every write after the last.
    snapshotDelayMs: 3_600_000,
    checkpointBytes: 2 ** 40,
    semanticRetriever: { clock: steppingClock('2026-01-01T00:00:00Z', 1), randomId: seededRandomId(2) },
    vertexRag: { clock: steppingClock('2026-01-01T00:00:00Z', 1), randomId: seededRandomId(1) },
    memoryBank: { clock: steppingClock('2026-01-01T00:00:00Z', 1), randomId: seededRandomId(3) },
    onInternalError: (error) => {
      throw error
    },
  }
}

async function post(url: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(response.status, await response.text()).toBe(200)
}

/** The crash image: the folder's files while the server runs (its LOCK left out), the acknowledged state, the log's name. */
let image: string
let acknowledged: Record<string, unknown>
let logName: string
let log: Buffer
let chunkNames: string[]

beforeAll(async () => {
  const live = scratchDir('quarry-wal-live-')
  roots.push(live)
  const server = createServer(options(live))
  const { url } = await server.listen()
  await post(url, '/v1beta/corpora', { name: 'corpora/c' })
  await post(url, '/v1beta/corpora/c/documents', { name: 'corpora/c/documents/d' })
  for (let i = 0; i < 3; i++) await post(url, '/v1beta/corpora/c/documents/d/chunks', { name: `corpora/c/documents/d/chunks/checkpointed-${i}`, data: { stringValue: `checkpointed ${i}` } })
  await server.flush()
  // Acknowledged after the checkpoint: in the log only.
  for (let i = 0; i < 5; i++) await post(url, '/v1beta/corpora/c/documents/d/chunks', { name: `corpora/c/documents/d/chunks/logged-${i}`, data: { stringValue: `logged ${i}` } })
  await post(url, '/v1beta1/projects/p/locations/l/reasoningEngines/1/memories?memoryId=tea', { fact: 'I like tea', scope: { user_id: 'u' } })
  acknowledged = engineState(server.engines)
  image = scratchDir('quarry-wal-image-')
  roots.push(image)
  cpSync(live, image, { recursive: true })
  rmSync(join(image, 'LOCK'))
  await server.close()
  const logs = readdirSync(image).filter((e) => /^wal-\d+\.log$/.test(e))
  expect(logs).toHaveLength(1)
  logName = logs[0] as string
  log = readFileSync(join(image, logName))
  chunkNames = [...Array.from({ length: 3 }, (_, i) => `checkpointed-${i}`), ...Array.from({ length: 5 }, (_, i) => `logged-${i}`)]
})

/** Restarts on a copy of the image whose log is `bytes` (undefined: no log file): the state it serves, or the refusal. */
async function restart(bytes: Buffer | undefined): Promise<{ started: true; state: Record<string, unknown>; chunks: string[]; replayed: number } | { started: false; error: QuarryError }> {
  const copy = scratchDir('quarry-wal-copy-')
  try {
    cpSync(image, copy, { recursive: true })
    if (bytes === undefined) rmSync(join(copy, logName))
    else writeFileSync(join(copy, logName), bytes)
    let server: ReturnType<typeof createServer>
    let url: string
    try {
      server = createServer(options(copy))
      ;({ url } = await server.listen())
    } catch (error) {
      if (!(error instanceof QuarryError)) throw error
      return { started: false, error }
    }
    try {
      const listed = (await (await fetch(`${url}/v1beta/corpora/c/documents/d/chunks?pageSize=100`)).json()) as { chunks?: { name: string }[] }
      const chunks = (listed.chunks ?? []).map((c) => c.name.replace('corpora/c/documents/d/chunks/', ''))
      return { started: true, state: engineState(server.engines), chunks, replayed: server.replayed }
    } finally {
      await server.close()
    }
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
}

/** The property: everything acknowledged, exactly, or a refusal that says what would be lost and how to start anyway. */
function expectAllOrRefused(outcome: Awaited<ReturnType<typeof restart>>, what: string): void {
  if (outcome.started) {
    expect(outcome.chunks, what).toEqual(chunkNames)
    expect(outcome.state, what).toEqual(acknowledged)
    return
  }
  expect(outcome.error.code, what).toBe('INVALID_SNAPSHOT')
  expect(outcome.error.message, what).toMatch(/would be lost|cannot be replayed/)
  expect(outcome.error.message, what).toMatch(/--accept-log-loss/)
}

describe('a data folder whose write-ahead log is damaged', () => {
  it('replays every acknowledged write from the log as it was left', async () => {
    const outcome = await restart(log)
    expect(outcome).toMatchObject({ started: true, replayed: 6 })
    expectAllOrRefused(outcome, 'untouched')
  })

  it('refuses a missing, emptied or 8-byte log, saying what would be lost', async () => {
    for (const [what, bytes] of [['missing', undefined], ['emptied', Buffer.alloc(0)], ['cut to 8 bytes', log.subarray(0, 8)]] as const) {
      const outcome = await restart(bytes)
      expect(outcome.started, what).toBe(false)
      if (outcome.started) continue
      expect(outcome.error.message, what).toMatch(new RegExp(`${logName}, which follows checkpoint 2 \\(taken [0-9T:.Z-]+\\), (is missing|is empty|holds 8 bytes)`))
      expect(outcome.error.message, what).toMatch(/every write acknowledged after that checkpoint would be lost/)
    }
  })

  it('refuses a log without its last record, or with a byte of it changed: 6 sealed, 1 lost', async () => {
    // The last record (the memory) with its 12-byte frame header.
    const lastFrame = (readLog(join(image, logName), undefined).records.at(-1)?.length ?? 0) + 12
    const cut = await restart(log.subarray(0, log.length - lastFrame))
    expect(cut).toMatchObject({ started: false })
    if (!cut.started) expect(cut.error.message).toMatch(/sealed 6 acknowledged writes after that checkpoint, 1 of which would be lost/)
    const flipped = Buffer.from(log)
    flipped[log.length - 2] = (flipped[log.length - 2] as number) ^ 0x01
    const changed = await restart(flipped)
    expect(changed).toMatchObject({ started: false })
    if (!changed.started) expect(changed.error.message).toMatch(/has damage in record 6 .*inside its sealed part: it sealed 6 acknowledged writes after that checkpoint, 1 of which would be lost/)
  })

  it('refuses a log of the unsealed format holding writes (kept aside with acceptLogLoss), and drops an empty one', async () => {
    const clean = scratchDir('quarry-wal-old-')
    roots.push(clean)
    cpSync(image, clean, { recursive: true })
    // A clean stop: its checkpoint names no log.
    const stopped = createServer(options(clean))
    await stopped.listen()
    await stopped.close()
    const old = join(clean, 'wal-000003.log')
    writeFileSync(old, Buffer.concat([Buffer.from('QRYWAL01', 'latin1'), Buffer.from('a record of the old format')]))
    await expect(createServer(options(clean)).listen()).rejects.toThrow(/wal-000003\.log is in the unsealed format of an unreleased Quarry \(QRYWAL01\).*its writes cannot be replayed.*--accept-log-loss/)
    const accepting = createServer({ ...options(clean), acceptLogLoss: true })
    await accepting.listen()
    expect(accepting.logKeptAside).toMatch(/wal-000003\.log\.damaged-/)
    expect(engineState(accepting.engines)).toEqual(acknowledged)
    await accepting.close()
    expect(readdirSync(clean).filter((e) => e.includes('.damaged-'))).toHaveLength(1)
    // The old format's bare header holds nothing: removed without a word.
    writeFileSync(old, Buffer.from('QRYWAL01', 'latin1'))
    const plain = createServer(options(clean))
    await plain.listen()
    expect(plain.logKeptAside).toBeUndefined()
    await plain.close()
    expect(readdirSync(clean).filter((e) => e.startsWith('wal-000003.log'))).toHaveLength(1)
  })

  it('after a cut anywhere or one changed byte anywhere, replays everything acknowledged or refuses (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ kind: fc.constant('cut' as const), at: fc.integer({ min: 0, max: log.length - 1 }) }),
          fc.record({ kind: fc.constant('change' as const), at: fc.integer({ min: 0, max: log.length - 1 }), xor: fc.integer({ min: 1, max: 255 }) }),
        ),
        async (damage) => {
          const bytes = Buffer.from(damage.kind === 'cut' ? log.subarray(0, damage.at) : log)
          if (damage.kind === 'change') bytes[damage.at] = (bytes[damage.at] as number) ^ damage.xor
          expectAllOrRefused(await restart(bytes), JSON.stringify(damage))
        },
      ),
      { numRuns: runs(24) },
    )
  })

  full.it('after each cut in the header, at and beside each record boundary, and every 23rd byte, replays everything acknowledged or refuses', async () => {
    // Every cut is checked against the reader alone in test/unit/write-ahead-log.test.ts; here the
    // cuts that differ in kind go through whole restarts.
    const cuts = new Set<number>()
    for (let at = 0; at <= 70; at++) cuts.add(at)
    let end = 64
    for (const record of readLog(join(image, logName), undefined).records) {
      end += record.length + 12
      for (let d = -13; d <= 2; d++) cuts.add(end + d)
    }
    for (let at = 0; at < log.length; at += 23) cuts.add(at)
    const sorted = [...cuts].filter((at) => at >= 0 && at < log.length).sort((a, b) => a - b)
    expect(sorted.length).toBeGreaterThan(150)
    for (const at of sorted) expectAllOrRefused(await restart(log.subarray(0, at)), `cut at ${at}`)
  })
})
