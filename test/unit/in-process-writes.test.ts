import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'

/**
 * Writes made in process through `server.engines` go through no transport, so no write-ahead log
 * records them; the server hears of each from its engine and saves it with a checkpoint (at the
 * latest the last one, at close). Before, with durability `log` or `checkpoint`, a clean stop
 * after such writes alone wrote nothing, and the next start had none of them. Each durability
 * here: one write of each engine in process, a clean stop, a start on the same folder; the
 * oracle is what each write answered (names and contents).
 */
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const ENGINE = 'projects/p/locations/l/reasoningEngines/1'

function serverOn(dir: string, durability: 'log' | 'checkpoint' | 'none'): QuarryServer {
  return createServer({ embedder: createHashingEmbedder({ dimensions: 16 }), dataDir: dir, durability, console: false })
}

function ok<T>(out: { ok: true; response: T } | { ok: false; status: { message: string } }): T {
  if (!out.ok) throw new Error(out.status.message)
  return out.response
}

describe('writes made in process (server.engines) with a data folder', () => {
  for (const durability of ['log', 'checkpoint', 'none'] as const) {
    it(`are all there after a clean stop and a start (durability ${durability})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'quarry-in-process-'))
      dirs.push(dir)
      const first = serverOn(dir, durability)
      await first.listen()
      const { semanticRetriever, vertexRag, memoryBank } = first.engines
      ok(await semanticRetriever.createCorpus({ corpus: { name: 'corpora/inproc', displayName: 'made in process' } }))
      const rag = ok(await vertexRag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'rag in process' } }))
      const memory = ok(await memoryBank.createMemory({ parent: ENGINE, memory: { fact: 'a fact in process', scope: { user_id: 'u' } } }))
      ok(await memoryBank.createReasoningEngine('projects/p/locations/l/reasoningEngines/2'))
      await first.close()

      const second = serverOn(dir, durability)
      await second.listen()
      try {
        expect(ok(await second.engines.semanticRetriever.getCorpus({ name: 'corpora/inproc' })).displayName).toBe('made in process')
        const ragName = (rag.response as unknown as { name: string }).name
        expect(ok(await second.engines.vertexRag.v1beta1.getRagCorpus({ name: ragName })).displayName).toBe('rag in process')
        const memories = ok(await second.engines.memoryBank.listMemories({ parent: ENGINE })).memories ?? []
        expect(memories.map((m) => [m.name, m.fact])).toEqual([[(memory.response as unknown as { name: string }).name, 'a fact in process']])
        expect([...second.engines.memoryBank.engines().keys()]).toEqual([ENGINE, 'projects/p/locations/l/reasoningEngines/2'])
      } finally {
        await second.close()
      }
    })
  }

  for (const durability of ['log', 'checkpoint', 'none'] as const) {
    it(`one still running when close() is called is in the last checkpoint (durability ${durability})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'quarry-in-process-'))
      dirs.push(dir)
      // The embedder holds the fact back until released: the write is under way when close() comes.
      const hashing = createHashingEmbedder({ dimensions: 16 })
      let started: () => void = () => undefined
      const embedding = new Promise<void>((resolve) => (started = resolve))
      let release: () => void = () => undefined
      const released = new Promise<void>((resolve) => (release = resolve))
      const embedder: Embedder = {
        ...hashing,
        embed: async (texts) => {
          if (texts.some((t) => t.includes('held'))) {
            started()
            await released
          }
          return hashing.embed(texts)
        },
      }
      const first = createServer({ embedder, dataDir: dir, durability, console: false })
      await first.listen()
      await first.flush()
      const written = first.engines.memoryBank.createMemory({ parent: ENGINE, memory: { fact: 'held back', scope: { user_id: 'u' } } })
      await embedding
      const closed = first.close()
      // Time for a close that did not wait for the write to finish without it (the write holds the
      // durability layer's turn, so the close's last checkpoint comes after it).
      await new Promise((resolve) => setTimeout(resolve, 200))
      release()
      const memory = ok(await written)
      await closed

      const second = serverOn(dir, durability)
      await second.listen()
      try {
        const memories = ok(await second.engines.memoryBank.listMemories({ parent: ENGINE })).memories ?? []
        expect(memories.map((m) => [m.name, m.fact])).toEqual([[(memory.response as unknown as { name: string }).name, 'held back']])
      } finally {
        await second.close()
      }
    })
  }

  for (const durability of ['log', 'checkpoint', 'none'] as const) {
    it(`one made from inside another (the embedder writing to another engine) is part of it, not a deadlock (durability ${durability})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'quarry-in-process-'))
      dirs.push(dir)
      const hashing = createHashingEmbedder({ dimensions: 16 })
      let server: QuarryServer | undefined
      const embedder: Embedder = {
        ...hashing,
        embed: async (texts) => {
          if (texts.some((t) => t.includes('nest'))) ok(await (server as QuarryServer).engines.memoryBank.createReasoningEngine('projects/p/locations/l/reasoningEngines/side'))
          return hashing.embed(texts)
        },
      }
      server = createServer({ embedder, dataDir: dir, durability, console: false })
      await server.listen()
      const { semanticRetriever } = server.engines
      ok(await semanticRetriever.createCorpus({ corpus: { name: 'corpora/n' } }))
      ok(await semanticRetriever.createDocument({ parent: 'corpora/n', document: { name: 'corpora/n/documents/d' } }))
      const chunk = ok(await semanticRetriever.createChunk({ parent: 'corpora/n/documents/d', chunk: { data: { stringValue: 'a nest' } } }))
      await server.close()

      const second = serverOn(dir, durability)
      await second.listen()
      try {
        const chunks = ok(await second.engines.semanticRetriever.listChunks({ parent: 'corpora/n/documents/d' })).chunks ?? []
        expect(chunks.map((c) => [c.name, c.data?.stringValue])).toEqual([[chunk.name, 'a nest']])
        expect([...second.engines.memoryBank.engines().keys()]).toEqual(['projects/p/locations/l/reasoningEngines/side'])
      } finally {
        await second.close()
      }
    }, 20_000)
  }
})
