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
 * then SIGKILL. Such a write does not go through the log: the server saves it with a checkpoint,
 * taken before the next write it logs (a logged write must replay over a state that holds it),
 * or after a logged write that ran while it did (the checkpoint then holds both). Before, a REST
 * write into a corpus made in process was logged over a checkpoint without that corpus: after a
 * kill, the start was refused ("does not replay here") and the acknowledged writes were out of
 * reach. The oracle is what each write answered: names, texts and facts after the restart.
 */
const ENGINE = 'projects/p/locations/l/reasoningEngines/1'
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The server of support/in-process-writer.ts in its own process, with its data folder. */
class Writer {
  readonly #child: ChildProcess
  readonly #messages: WriterMessage[] = []
  #wake: () => void = () => undefined
  readonly url: Promise<string>

  constructor(dir: string) {
    this.#child = fork(fileURLToPath(new URL('../support/in-process-writer.ts', import.meta.url)), [dir, 'log'], {
      execArgv: ['--conditions=quarry-source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.#child.on('message', (m: WriterMessage) => {
      this.#messages.push(m)
      this.#wake()
    })
    this.url = this.#next((m): m is { ready: string } => 'ready' in m).then((m) => m.ready)
  }

  /** The first message not yet taken that `is` accepts (waiting for it). */
  async #next<T extends WriterMessage>(is: (m: WriterMessage) => m is T): Promise<T> {
    for (;;) {
      const at = this.#messages.findIndex(is)
      if (at >= 0) return this.#messages.splice(at, 1)[0] as T
      if (this.#child.exitCode !== null) throw new Error(`the writer exited (${this.#child.exitCode})`)
      await new Promise<void>((resolve) => (this.#wake = resolve))
    }
  }

  async ask(ask: WriterAsk): Promise<unknown> {
    this.#child.send(ask)
    return (await this.#next((m): m is { answer: unknown } => 'answer' in m)).answer
  }

  /** Resolves once the child's embedder holds a text back. */
  holding(): Promise<unknown> {
    return this.#next((m): m is { holding: true } => 'holding' in m)
  }

  async kill(): Promise<void> {
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

  it('an in-process write made while a REST write runs: both are there after the restart', async () => {
    const dir = scratch()
    const writer = new Writer(dir)
    const url = await writer.url
    await post(url, '/v1beta/corpora', { name: 'corpora/race' })
    await post(url, '/v1beta/corpora/race/documents', { name: 'corpora/race/documents/d' })
    // The REST write waits in the embedder until released; the memory is written meanwhile.
    const held = post(url, '/v1beta/corpora/race/documents/d/chunks', { data: { stringValue: 'hold this one' } })
    await writer.holding()
    const memory = (await writer.ask({ op: 'memory', parent: ENGINE, fact: 'made in process' })) as { ok: boolean; response: { response: { name: string } } }
    expect(memory.ok).toBe(true)
    await writer.ask({ op: 'release' })
    const chunk = await held
    await writer.kill()

    const server = await restarted(dir)
    try {
      expect(await chunksOf(server, 'corpora/race/documents/d')).toEqual([{ name: chunk['name'], text: 'hold this one' }])
      const memories = await server.engines.memoryBank.listMemories({ parent: ENGINE })
      if (!memories.ok) throw new Error(memories.status.message)
      expect((memories.response.memories ?? []).map((m) => [m.name, m.fact])).toEqual([[memory.response.response.name, 'made in process']])
    } finally {
      await server.close()
    }
  })
})
