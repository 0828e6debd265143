/**
 * A second process for test/unit/persist-protocol.test.ts, run as
 * `node --conditions=quarry-source --import tsx test/unit/persist-protocol-child.ts <mode> <dir> ...`.
 *
 * - `save <dir> <tag> <rounds>`: saves an index whose ids start with `tag` to `dir`, `rounds` times
 *   as fast as it can; prints one JSON line per save: `{"ok":true}` or the error's code and message.
 * - `hold <dir>`: opens a DataDir on `dir` (taking its lock), prints `held`, and keeps it until
 *   stdin closes (or the process is killed).
 * - `open <dir>`: tries to open a DataDir on `dir`; prints the outcome as JSON and exits.
 */
import { createHashingEmbedder, createIndex, QuarryError } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { DataDir } from '../../packages/adapters/src/transport/data-dir.js'

const [mode, dir, tag, rounds] = process.argv.slice(2)
if (mode === undefined || dir === undefined) throw new Error('usage: <mode> <dir> ...')

function outcome(run: () => void): Record<string, unknown> {
  try {
    run()
    return { ok: true }
  } catch (error) {
    return error instanceof QuarryError ? { ok: false, code: error.code, message: error.message } : { ok: false, name: error instanceof Error ? error.name : typeof error, message: String(error) }
  }
}

function engines(): ConstructorParameters<typeof DataDir>[1] {
  const embedder = createHashingEmbedder({ dimensions: 16 })
  return { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
}

if (mode === 'save') {
  const index = createIndex({ dimensions: 16, metric: 'cosine' })
  let seed = tag === 'a' ? 1 : 2
  const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1
  for (let i = 0; i < 3000; i++) index.add({ id: `${tag}${i}`, vector: Array.from({ length: 16 }, next), text: `${tag} record ${i}`, metadata: { n: i } })
  for (let r = 0; r < Number(rounds ?? 1); r++) console.log(JSON.stringify(outcome(() => index.save(dir))))
} else if (mode === 'hold') {
  const data = new DataDir(dir, engines())
  data.load()
  console.log('held')
  process.stdin.resume()
  process.stdin.on('end', () => {
    data.close()
    process.exit(0)
  })
} else if (mode === 'open') {
  console.log(JSON.stringify(outcome(() => new DataDir(dir, engines()).close())))
}
