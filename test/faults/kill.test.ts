import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { prng } from '../support/random.js'
import { startServe } from '../support/quarry-process.js'

/**
 * Nothing acknowledged is lost (issue 18): `quarry serve --data DIR` (durability `log`, the
 * default) with four concurrent writers over REST on two APIs (Semantic Retriever chunks, Memory
 * Bank memories), killed with SIGKILL at random moments and restarted on the same folder. Every
 * write answered 200 must be there after the last restart, and nothing that was never sent.
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

describe('quarry serve --data under SIGKILL', () => {
  it(`keeps every acknowledged write over ${KILLS} kills with ${WRITERS} concurrent writers on two APIs`, async () => {
    const random = prng(18)
    const acked = new Set<string>()
    const sent = new Set<string>()
    let setUp = false
    for (let round = 0; round < KILLS; round++) {
      const server = await start()
      const base = server.base
      if (!setUp) {
        expect(await post(base, '/v1beta/corpora', { name: 'corpora/kill' })).toBe(200)
        expect(await post(base, '/v1beta/corpora/kill/documents', { name: DOC })).toBe(200)
        setUp = true
      }
      let killed = false
      // The kill comes at a random moment after this process's first acknowledged write (a loaded
      // machine may take seconds to answer the first one; a kill before it would test nothing).
      let firstAck: () => void = () => undefined
      const acknowledged = new Promise<void>((resolve) => (firstAck = resolve))
      const writer = async (w: number): Promise<void> => {
        for (let i = 0; !killed; i++) {
          const id = `r${round}-w${w}-${i}`
          sent.add(id)
          try {
            const status =
              (w + i) % 2 === 0
                ? await post(base, `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/${id}`, data: { stringValue: `chunk ${id}` } })
                : await post(base, `${ENGINE}/memories`, { fact: `fact ${id}`, scope: { user_id: `u${w}` } })
            if (status === 200) {
              acked.add(id)
              firstAck()
            }
          } catch {
            // The connection died with the server: the write may or may not have been applied.
          }
        }
      }
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w))
      await acknowledged
      await new Promise((r) => setTimeout(r, Math.floor(random() * 500)))
      const killing = server.kill()
      killed = true
      await Promise.all(writers)
      await killing
    }
    const last = await start()
    const base = last.base
    try {
      const chunks = (await listAll(base, `/v1beta/${DOC}/chunks`, 'chunks')).map((c) => String(c['name']).slice(`${DOC}/chunks/`.length))
      const memories = (await listAll(base, `${ENGINE}/memories`, 'memories')).map((m) => String(m['fact']).slice('fact '.length))
      const present = new Set([...chunks, ...memories])
      const lost = [...acked].filter((id) => !present.has(id))
      const invented = [...present].filter((id) => !sent.has(id))
      expect(acked.size).toBeGreaterThan(KILLS * WRITERS)
      expect({ lost, invented }).toEqual({ lost: [], invented: [] })
      // Each id at most once (a replay applies a write once).
      expect(chunks.length + memories.length).toBe(present.size)
    } finally {
      await last.kill()
    }
  }, 240_000)
})
