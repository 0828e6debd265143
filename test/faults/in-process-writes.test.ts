import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'
import type { WriterAsk, WriterMessage } from '../support/in-process-writer.js'

/**
 * Writes made in process (`server.engines`) beside a server's write-ahead log (durability `log`),
 * then SIGKILL. Such a write does not go through the log: it takes its turn with the logged writes
 * (none runs beside it), and the server saves it with a checkpoint taken before the next write it
 * logs (a logged write must replay over a state that holds it). Before, a REST
 * write into a corpus made in process was logged over a checkpoint without that corpus: after a
 * kill, the start was refused ("does not replay here") and the acknowledged writes were out of
 * reach. The oracle is what each write answered: names, texts and facts after the restart.
 */
const ENGINE = 'projects/p/locations/l/reasoningEngines/1'
const dirs: string[] = []
/** Every writer started: one a failed test left running is killed at the end. */
const writers: Writer[] = []
afterAll(async () => {
  await Promise.all(writers.map((w) => w.kill()))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The server of support/in-process-writer.ts in its own process, with its data folder. */
class Writer {
  readonly #child: ChildProcess
  readonly #messages: WriterMessage[] = []
  readonly #waiting = new Set<() => void>()
  #asked = 0
  readonly url: Promise<string>

  constructor(dir: string) {
    writers.push(this)
    this.#child = fork(fileURLToPath(new URL('../support/in-process-writer.ts', import.meta.url)), [dir, 'log'], {
      execArgv: ['--conditions=quarry-source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.#child.on('message', (m: WriterMessage) => {
      this.#messages.push(m)
      for (const wake of this.#waiting) wake()
    })
    this.url = this.#next((m): m is { ready: string } => 'ready' in m).then((m) => m.ready)
  }

  /** The first message not yet taken that `is` accepts (waiting for it). */
  async #next<T extends WriterMessage>(is: (m: WriterMessage) => m is T): Promise<T> {
    for (;;) {
      const at = this.#messages.findIndex(is)
      if (at >= 0) return this.#messages.splice(at, 1)[0] as T
      if (this.#child.exitCode !== null) throw new Error(`the writer exited (${this.#child.exitCode})`)
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiting.delete(wake)
          resolve()
        }
        this.#waiting.add(wake)
      })
    }
  }

  async ask(ask: WriterAsk): Promise<unknown> {
    const id = ++this.#asked
    this.#child.send({ id, ask })
    return (await this.#next((m): m is { id: number; answer: unknown } => 'id' in m && m.id === id)).answer
  }

  /** A memory of `fact` made in process under ENGINE: the child's answer (a done operation). */
  memory(fact: string): Promise<{ ok: boolean; response: { response: { name: string } } }> {
    return this.ask({ op: 'memory', parent: ENGINE, fact }) as Promise<{ ok: boolean; response: { response: { name: string } } }>
  }

  /** Resolves once the child's embedder holds a text back. */
  holding(): Promise<unknown> {
    return this.#next((m): m is { holding: true } => 'holding' in m)
  }

  async kill(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return
    const exited = new Promise((resolve) => this.#child.once('exit', resolve))
    this.#child.kill('SIGKILL')
    await exited
  }
}

async function post(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const json = (await response.json()) as Record<string, unknown>
  expect(response.status, JSON.stringify(json)).toBe(200)
  return json
}

/** The folder opened again in this process (its last owner was killed). */
async function restarted(dir: string): Promise<QuarryServer> {
  const server = createServer({ embedder: createHashingEmbedder({ dimensions: 16 }), dataDir: dir, console: false })
  await server.listen()
  return server
}

async function chunksOf(server: QuarryServer, document: string): Promise<{ name: unknown; text: unknown }[]> {
  const out = await server.engines.semanticRetriever.listChunks({ parent: document })
  if (!out.ok) throw new Error(out.status.message)
  return (out.response.chunks ?? []).map((c) => ({ name: c.name, text: c.data?.stringValue }))
}

async function factsOf(server: QuarryServer): Promise<unknown[][]> {
  const out = await server.engines.memoryBank.listMemories({ parent: ENGINE })
  if (!out.ok) throw new Error(out.status.message)
  return (out.response.memories ?? []).map((m) => [m.name, m.fact])
}

/** A writer on a new folder, with a corpus and its document `d` made over REST (logged). */
async function writerWithDocument(corpus: string): Promise<{ dir: string; writer: Writer; url: string }> {
  const dir = scratch()
  const writer = new Writer(dir)
  const url = await writer.url
  await post(url, '/v1beta/corpora', { name: corpus })
  await post(url, `/v1beta/${corpus}/documents`, { name: `${corpus}/documents/d` })
  return { dir, writer, url }
}

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-in-process-'))
  dirs.push(dir)
  return dir
}

describe('in-process writes beside the write-ahead log, then SIGKILL', () => {
  it('a corpus made in process and written into over REST: the restart serves every acknowledged write', async () => {
    const dir = scratch()
    const writer = new Writer(dir)
    const url = await writer.url
    expect(await writer.ask({ op: 'corpus', name: 'corpora/inproc' })).toMatchObject({ ok: true })
    await post(url, '/v1beta/corpora/inproc/documents', { name: 'corpora/inproc/documents/d' })
    const chunk = await post(url, '/v1beta/corpora/inproc/documents/d/chunks', { data: { stringValue: 'written over REST' } })
    await writer.kill()

    const server = await restarted(dir)
    try {
      expect(await chunksOf(server, 'corpora/inproc/documents/d')).toEqual([{ name: chunk['name'], text: 'written over REST' }])
    } finally {
      await server.close()
    }
  })

  it('an in-process write asked for while a REST write runs waits its turn; the next REST write saves it first: all are there after the restart', async () => {
    const { dir, writer, url } = await writerWithDocument('corpora/race')
    // The REST write waits in the embedder until released; the memory is asked for meanwhile.
    const held = post(url, '/v1beta/corpora/race/documents/d/chunks', { data: { stringValue: 'hold this one' } })
    await writer.holding()
    const asked = writer.memory('made in process')
    await writer.ask({ op: 'release' })
    const [chunk, memory] = await Promise.all([held, asked])
    expect(memory.ok).toBe(true)
    // Made after the held write: in memory only until a checkpoint, which this next write takes first.
    const next = await post(url, '/v1beta/corpora/race/documents/d/chunks', { data: { stringValue: 'the next one' } })
    await writer.kill()

    const server = await restarted(dir)
    try {
      expect(await chunksOf(server, 'corpora/race/documents/d')).toEqual([
        { name: chunk['name'], text: 'hold this one' },
        { name: next['name'], text: 'the next one' },
      ])
      expect(await factsOf(server)).toEqual([[memory.response.response.name, 'made in process']])
    } finally {
      await server.close()
    }
  })

  it('a REST write that comes while an in-process write runs is logged after it: both are there after the restart', async () => {
    const { dir, writer, url } = await writerWithDocument('corpora/after')
    // The in-process write waits in the embedder until released; the REST write comes meanwhile.
    const asked = writer.memory('hold this fact')
    await writer.holding()
    const sent = post(url, '/v1beta/corpora/after/documents/d/chunks', { data: { stringValue: 'sent over REST' } })
    // Time for the request to reach the server (it waits there for the in-process write to end;
    // were it logged beside it, the in-process write would be in no checkpoint at the kill).
    await new Promise((resolve) => setTimeout(resolve, 300))
    await writer.ask({ op: 'release' })
    const [memory, chunk] = await Promise.all([asked, sent])
    expect(memory.ok).toBe(true)
    await writer.kill()

    const server = await restarted(dir)
    try {
      expect(await chunksOf(server, 'corpora/after/documents/d')).toEqual([{ name: chunk['name'], text: 'sent over REST' }])
      expect(await factsOf(server)).toEqual([[memory.response.response.name, 'hold this fact']])
    } finally {
      await server.close()
    }
  })
})
