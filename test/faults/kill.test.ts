import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { prng } from '../support/random.js'
import { startServe, type ServeProcess } from '../support/quarry-process.js'

/**
 * Nothing acknowledged is lost (issue 18): `quarry serve --data DIR` (durability `log`, the
 * default) with four concurrent writers over REST on two APIs (Semantic Retriever chunks, Memory
 * Bank memories), killed with SIGKILL at random moments and restarted on the same folder. Every
 * write answered 200 must be there after the last restart, and nothing that was never sent. The
 * second case checkpoints every 50 ms, each checkpoint linking a corpus no write touches.
 */
const KILLS = 12
const WRITERS = 4
const dir = mkdtempSync(join(tmpdir(), 'quarry-kill-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const start = () => startServe(['--embedder', 'hashing', '--data', dir])

async function post(base: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await response.arrayBuffer()
  return response.status
}

async function listAll(base: string, path: string, items: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = []
  let token = ''
  do {
    const response = await fetch(`${base}${path}?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)
    const json = (await response.json()) as Record<string, unknown>
    expect(response.status, JSON.stringify(json)).toBe(200)
    out.push(...((json[items] as Record<string, unknown>[] | undefined) ?? []))
    token = (json['nextPageToken'] as string | undefined) ?? ''
  } while (token !== '')
  return out
}

const ENGINE = '/v1beta1/projects/p/locations/l/reasoningEngines/1'
const DOC = 'corpora/kill/documents/d'

/** What the writers sent and what the server acknowledged (200), by write id. */
interface Writes {
  readonly sent: Set<string>
  readonly acked: Set<string>
}

/**
 * One round: four writers (chunks and memories in turn) until the server is SIGKILLed, at a
 * random moment at least `minMs` after this process's first acknowledged write (a loaded machine
 * may take seconds to answer the first one; a kill before it would test nothing).
 */
async function writeUntilKilled(server: ServeProcess, round: number, writes: Writes, random: () => number, minMs: number): Promise<void> {
  const base = server.base
  let killed = false
  let firstAck: () => void = () => undefined
  const acknowledged = new Promise<void>((resolve) => (firstAck = resolve))
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; !killed; i++) {
      const id = `r${round}-w${w}-${i}`
      writes.sent.add(id)
      try {
        const status =
          (w + i) % 2 === 0
            ? await post(base, `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/${id}`, data: { stringValue: `chunk ${id}` } })
            : await post(base, `${ENGINE}/memories`, { fact: `fact ${id}`, scope: { user_id: `u${w}` } })
        if (status === 200) {
          writes.acked.add(id)
          firstAck()
        }
      } catch {
        // The connection died with the server: the write may or may not have been applied.
      }
    }
  }
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w))
  await acknowledged
  await new Promise((r) => setTimeout(r, minMs + Math.floor(random() * (500 - minMs))))
  const killing = server.kill()
  killed = true
  await Promise.all(writers)
  await killing
}

/** After the last restart: every acknowledged write is there, nothing that was never sent, each once. */
async function expectNothingLost(base: string, writes: Writes): Promise<void> {
  const chunks = (await listAll(base, `/v1beta/${DOC}/chunks`, 'chunks')).map((c) => String(c['name']).slice(`${DOC}/chunks/`.length))
  const memories = (await listAll(base, `${ENGINE}/memories`, 'memories')).map((m) => String(m['fact']).slice('fact '.length))
  const present = new Set([...chunks, ...memories])
  const lost = [...writes.acked].filter((id) => !present.has(id))
  const invented = [...present].filter((id) => !writes.sent.has(id))
  expect(writes.acked.size).toBeGreaterThan(KILLS * WRITERS)
  expect({ lost, invented }).toEqual({ lost: [], invented: [] })
  // Each id at most once (a replay applies a write once).
  expect(chunks.length + memories.length).toBe(present.size)
}

describe('quarry serve --data under SIGKILL', () => {
  it(`keeps every acknowledged write over ${KILLS} kills with ${WRITERS} concurrent writers on two APIs`, async () => {
    const random = prng(18)
    const writes: Writes = { sent: new Set(), acked: new Set() }
    for (let round = 0; round < KILLS; round++) {
      const server = await start()
      if (round === 0) {
        expect(await post(server.base, '/v1beta/corpora', { name: 'corpora/kill' })).toBe(200)
        expect(await post(server.base, '/v1beta/corpora/kill/documents', { name: DOC })).toBe(200)
      }
      await writeUntilKilled(server, round, writes, random, 0)
    }
    const last = await start()
    try {
      await expectNothingLost(last.base, writes)
    } finally {
      await last.kill()
    }
  }, 240_000)

  it(`keeps every acknowledged write and an untouched corpus over ${KILLS} kills with a checkpoint every 50 ms, each linking that corpus`, async () => {
    // Checkpoints every 50 ms while writes go on: each one links the files of a corpus no write
    // touches (its index unchanged) instead of writing them, and a kill can land in any of them.
    const folder = mkdtempSync(join(tmpdir(), 'quarry-kill-links-'))
    const STILL = 'corpora/still/documents/d'
    const query = async (base: string): Promise<{ status: number; text: string }> => {
      const answer = await fetch(`${base}/v1beta/corpora/still:query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'passage about quiet rivers', resultsCount: 10 }) })
      return { status: answer.status, text: await answer.text() }
    }
    /** The current checkpoint, and the inodes of the untouched corpus's vectors and documents' file in it (corpora/still, created first: corpus-0). */
    const checkpoint = (): { generation: string; inode: string } => {
      const generation = readFileSync(join(folder, 'CURRENT'), 'latin1').trim()
      const inode = (...path: string[]): bigint => statSync(join(folder, generation, 'semantic-retriever', ...path), { bigint: true }).ino
      return { generation, inode: `${inode('corpus-0', 'snapshot-000001', 'vectors.f32')}:${inode('corpus-0.json')}` }
    }
    const random = prng(43)
    const writes: Writes = { sent: new Set(), acked: new Set() }
    let expected = ''
    let first: { generation: string; inode: string } | undefined
    let linkedRounds = 0
    try {
      for (let round = 0; round < KILLS; round++) {
        const server = await startServe(['--embedder', 'hashing', '--data', folder, '--checkpoint-seconds', '0.05'])
        const base = server.base
        if (round === 0) {
          expect(await post(base, '/v1beta/corpora', { name: 'corpora/still' })).toBe(200)
          expect(await post(base, '/v1beta/corpora/still/documents', { name: STILL })).toBe(200)
          const requests = Array.from({ length: 100 }, (_, i) => ({ chunk: { name: `${STILL}/chunks/s${i}`, data: { stringValue: `passage ${i} about ${i % 3 === 0 ? 'quiet rivers' : 'loud cities'} and ${i % 7} stones` } } }))
          expect(await post(base, `/v1beta/${STILL}/chunks:batchCreate`, { requests })).toBe(200)
          expect(await post(base, '/v1beta/corpora', { name: 'corpora/kill' })).toBe(200)
          expect(await post(base, '/v1beta/corpora/kill/documents', { name: DOC })).toBe(200)
          const answer = await query(base)
          expected = answer.text
          expect(answer.status, expected).toBe(200)
        } else {
          // The untouched corpus answers as it did, after a restart from checkpoints that linked it.
          expect((await query(base)).text).toBe(expected)
        }
        await writeUntilKilled(server, round, writes, random, 100)
        // Linked: a later checkpoint holds the first one's files of the untouched corpus.
        const now = checkpoint()
        first ??= now
        if (now.generation !== first.generation && now.inode === first.inode) linkedRounds++
      }
      const last = await startServe(['--embedder', 'hashing', '--data', folder])
      try {
        await expectNothingLost(last.base, writes)
        expect((await query(last.base)).text).toBe(expected)
        // Checkpoints were taken between kills and linked the untouched corpus (in most rounds: a
        // kill may land before a round's first checkpoint commits on a slow machine).
        expect(linkedRounds).toBeGreaterThanOrEqual(KILLS / 2)
      } finally {
        await last.kill()
      }
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  }, 240_000)
})
