import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { completeFirstGeneration, DirectoryLock, readGeneration, writeGenerationInSlices, type GenerationFormat, type GenerationWriter, type SliceOptions, type Steps } from '@quarry/core'
import type { Engines } from './bound-methods.js'

/**
 * `--data DIR`: the server's state as generations of core's one protocol (`@quarry/core`
 * writeGeneration / readGeneration): `snapshot-N/` holds `semantic-retriever/`, `vertex-rag/` and
 * `memory-bank/` (each engine's versioned `state.json` and its core index snapshots) and a sealed
 * `manifest.json` listing every file's size and sha256; `CURRENT` names it and is switched by an
 * atomic rename. A load checks every file before any engine reads one: a missing, truncated or
 * edited file is refused (INVALID_SNAPSHOT), never served.
 *
 * A DataDir holds the folder's `LOCK` from construction to `close()`, so a second server (or an
 * index save) on the same folder is refused at once (LOCKED); a LOCK left by a process that died
 * is taken over, and the debris of its interrupted saves removed.
 */
const APIS = ['semantic-retriever', 'vertex-rag', 'memory-bank'] as const

const FORMAT: GenerationFormat = {
  format: 'quarry-data',
  version: 1,
  kind: 'Quarry data folder',
  remedy: 'Restore the folder from a backup, or remove the folder to start empty.',
}

export class DataDir {
  readonly root: string
  readonly #engines: Engines
  readonly #lock: DirectoryLock
  #generation = 0
  #loaded = false
  #manifest: Readonly<Record<string, unknown>> = {}

  /** Takes the folder's lock (QuarryError LOCKED when another live process holds it). */
  constructor(root: string, engines: Engines) {
    this.root = root
    this.#engines = engines
    mkdirSync(root, { recursive: true })
    this.#lock = DirectoryLock.acquire(root)
  }

  /** The number of the current generation: the one loaded or last saved (0 before any). */
  get generation(): number {
    return this.#generation
  }

  /** The fields the current generation's manifest holds besides its files (a save's `fields`; empty before any). */
  get manifest(): Readonly<Record<string, unknown>> {
    return this.#manifest
  }

  /**
   * Loads the current generation, if any; returns whether there was one. A folder that cannot be
   * read is refused (INVALID_SNAPSHOT); on the first load the lock is released too, so a server
   * that fails to start leaves the folder free.
   */
  load(): boolean {
    let number: number | undefined
    try {
      // A first checkpoint cut short between its rename and CURRENT (a start killed before it served).
      if (!this.#loaded) completeFirstGeneration(this.root, FORMAT)
      number = readGeneration(this.root, FORMAT, (generation) => {
        this.#engines.semanticRetriever.loadFolder(join(generation.folder, 'semantic-retriever'), generation.sumOf)
        this.#engines.vertexRag.loadFolder(join(generation.folder, 'vertex-rag'), generation.sumOf)
        this.#engines.memoryBank.loadFolder(join(generation.folder, 'memory-bank'), generation.sumOf)
        this.#manifest = generation.manifest
        return generation.number
        // The engines' index snapshots are checked by loadIndex as it reads them (once, not twice).
      }, { nested: true })
    } catch (error) {
      // A folder that cannot be read at start leaves nothing to write: let it go (a later reload keeps the lock).
      if (!this.#loaded) this.close()
      throw error
    } finally {
      this.#loaded = true
    }
    if (number === undefined) return false
    this.#generation = number
    return true
  }

  /**
   * Writes a new generation and switches CURRENT to it. The engines' writes are held off until it
   * is written (one consistent view); reads go on: the generation is written in slices of about
   * `sliceMs` between which the event loop runs, fsyncs and HNSW graphs off the main thread.
   * Resolves to undefined once the switch is durable, or to the error of the folder's fsync after
   * it: committed, but a power loss may undo the switch (the generation before is kept; see
   * `onUnconfirmed` of core's writeGeneration).
   */
  async save(options: SliceOptions & { readonly fields?: Readonly<Record<string, unknown>> } = {}): Promise<Error | undefined> {
    if (!this.#lock.held) throw new Error(`the data folder ${this.root} was closed; open a new DataDir to write to it.`)
    const { semanticRetriever, vertexRag, memoryBank } = this.#engines
    const fields = options.fields ?? {}
    let unconfirmed: Error | undefined
    const write = (): Promise<number> => writeGenerationInSlices(this.root, FORMAT, (out) => this.#write(out, fields), { ...options, lock: this.#lock, onUnconfirmed: (error) => (unconfirmed = error) })
    this.#generation = await semanticRetriever.exclusive(() => vertexRag.exclusive(() => memoryBank.exclusive(write)))
    this.#manifest = fields
    return unconfirmed
  }

  *#write(out: GenerationWriter, fields: Readonly<Record<string, unknown>>): Steps<Record<string, unknown>> {
    for (const api of APIS) mkdirSync(out.path(api))
    yield* this.#engines.semanticRetriever.saveSteps(out, 'semantic-retriever')
    yield* this.#engines.vertexRag.saveSteps(out, 'vertex-rag')
    yield* this.#engines.memoryBank.saveSteps(out, 'memory-bank')
    return { ...fields }
  }

  /** Whether the folder's LOCK is still this server's: false once the folder was deleted or its lock taken. */
  get lockIntact(): boolean {
    return this.#lock.intact
  }

  /** Releases the folder's lock (after the last save). Safe to call twice. */
  close(): void {
    this.#lock.release()
  }
}
