import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Engines } from '../transport/bound-methods.js'

/**
 * `--data DIR`: the server's state as snapshots. A snapshot is written whole into a temporary
 * folder, renamed to `snapshot-<n>`, and only then named by `CURRENT` (itself replaced by a
 * rename), so a crash at any point leaves the previous snapshot intact and readable; older
 * snapshots and leftovers of interrupted writes are removed after the switch.
 */
const APIS = ['semantic-retriever', 'vertex-rag', 'memory-bank'] as const

export class DataDir {
  readonly root: string
  readonly #engines: Engines
  #generation = 0

  constructor(root: string, engines: Engines) {
    this.root = root
    this.#engines = engines
    mkdirSync(root, { recursive: true })
  }

  /** The number of the current generation (0 before the first). */
  get generation(): number {
    return this.#generation
  }

  /** Loads the current snapshot, if any; returns whether there was one. */
  load(): boolean {
    const pointer = join(this.root, 'CURRENT')
    if (!existsSync(pointer)) return false
    const name = readFileSync(pointer, 'utf8').trim()
    if (!/^snapshot-\d+$/.test(name)) throw new Error(`${pointer} does not name a snapshot (found "${name}"); restore it or remove the folder to start empty.`)
    const dir = join(this.root, name)
    this.#generation = Number(name.slice('snapshot-'.length))
    this.#engines.semanticRetriever.loadFrom(join(dir, 'semantic-retriever'))
    this.#engines.vertexRag.loadFrom(join(dir, 'vertex-rag'))
    this.#engines.memoryBank.loadFrom(join(dir, 'memory-bank'))
    return true
  }

  /** Writes a new snapshot and switches CURRENT to it (synchronous: one consistent view of the engines). */
  save(): void {
    const next = this.#generation + 1
    const tmp = join(this.root, `.tmp-snapshot-${next}-${process.pid}`)
    rmSync(tmp, { recursive: true, force: true })
    for (const api of APIS) mkdirSync(join(tmp, api), { recursive: true })
    this.#engines.semanticRetriever.saveTo(join(tmp, 'semantic-retriever'))
    this.#engines.vertexRag.saveTo(join(tmp, 'vertex-rag'))
    this.#engines.memoryBank.saveTo(join(tmp, 'memory-bank'))
    const name = `snapshot-${next}`
    rmSync(join(this.root, name), { recursive: true, force: true })
    renameSync(tmp, join(this.root, name))
    writeFileSync(join(this.root, 'CURRENT.tmp'), `${name}\n`)
    renameSync(join(this.root, 'CURRENT.tmp'), join(this.root, 'CURRENT'))
    this.#generation = next
    for (const entry of readdirSync(this.root)) {
      if ((entry.startsWith('snapshot-') && entry !== name) || entry.startsWith('.tmp-snapshot-')) rmSync(join(this.root, entry), { recursive: true, force: true })
    }
  }
}
