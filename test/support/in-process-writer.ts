// A server with a data folder in its own process (test/faults/in-process-writes.test.ts), written
// to in process (`server.engines`) on the parent's asks while the parent writes over REST, and
// killed with SIGKILL by the parent. Asks and answers go over IPC.
//
// Its embedder holds back any text with the word "hold": it tells the parent it has started such
// a text, and embeds it once the parent says `release`, so a REST write can be kept running while
// the parent makes an in-process write.
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { createServer } from '@quarry/adapters'

/** What the parent asks. */
export type WriterAsk =
  | { readonly op: 'corpus'; readonly name: string }
  | { readonly op: 'memory'; readonly parent: string; readonly fact: string }
  | { readonly op: 'release' }

/** What the child sends: ready, the answer to the ask of that id, or that a held text is being embedded. */
export type WriterMessage = { readonly ready: string } | { readonly id: number; readonly answer: unknown } | { readonly holding: true }

const send = (message: WriterMessage): void => void process.send?.(message)
const [dataDir, durability] = process.argv.slice(2) as [string, 'log' | 'checkpoint' | 'none']

const hashing = createHashingEmbedder({ dimensions: 16 })
let release: () => void = () => undefined
const embedder: Embedder = {
  ...hashing,
  embed: async (texts) => {
    if (texts.some((t) => /\bhold\b/.test(t))) {
      const released = new Promise<void>((resolve) => (release = resolve))
      send({ holding: true })
      await released
    }
    return hashing.embed(texts)
  },
}

const server = createServer({ embedder, dataDir, durability, console: false })
const { url } = await server.listen()
process.on('message', ({ id, ask }: { id: number; ask: WriterAsk }) => {
  const answer = async (): Promise<unknown> => {
    if (ask.op === 'release') return release()
    if (ask.op === 'corpus') return server.engines.semanticRetriever.createCorpus({ corpus: { name: ask.name } })
    return server.engines.memoryBank.createMemory({ parent: ask.parent, memory: { fact: ask.fact, scope: { user_id: 'u' } } })
  }
  void answer().then((value) => send({ id, answer: value ?? null }))
})
send({ ready: url })
