import { resolve } from 'node:path'
import { QuarryError, readGeneration, writeGeneration, type FileSum, type GenerationFormat, type GenerationWriter, type Steps } from '@quarry/core'
import type { EngineWrites, UnloggedRoute } from './engine-writes.js'
import type { StateFormat } from './saved-state.js'

/** How an engine's state goes into a folder of a generation and back: its persistence.ts. */
export interface EngineStorage {
  readonly format: StateFormat
  /** The state as steps into `folder` of a generation being written ('' is its top). */
  save(out: GenerationWriter, folder: string): Steps
  /**
   * Replaces the state with the one `save` wrote into `dir` (its generation already checked);
   * `sumOf` gives the checked size and sha256 of a file of it (files kept for linking, LinkableFile).
   */
  load(dir: string, sumOf: (path: string) => FileSum | undefined): void
  /** Holds off what else changes the state while a save runs, besides writes (Memory Bank: expiry sweeps). */
  hold?<T>(fn: () => Promise<T>): Promise<T>
}

/** The generation an engine's own `saveTo(dir)` writes (its state.json and index snapshots, checksummed). */
function generationFormat(format: StateFormat): GenerationFormat {
  return {
    format: format.format,
    version: format.version,
    ...(format.reads === undefined ? {} : { reads: format.reads }),
    kind: `${format.engine} save`,
    remedy: 'Restore the folder from a backup, or save the engine again.',
  }
}

/**
 * What every engine (Semantic Retriever, RAG Engine, Memory Bank) does to be saved and loaded,
 * written once: its own folder as a generation of core's protocol (`saveTo` / `loadFrom`), or its
 * part of a server's data folder (`saveSteps` / `loadFolder`, under `exclusive`).
 */
export class PersistentEngine {
  readonly #storage: EngineStorage
  readonly #writes: EngineWrites

  protected constructor(storage: EngineStorage, writes: EngineWrites) {
    this.#storage = storage
    this.#writes = writes
  }

  /**
   * Writes the engine's state (its resources and their index snapshots) into `dir` as a
   * generation of core's protocol: the folder's lock held, every file checksummed in a sealed
   * manifest, CURRENT switched atomically. Synchronous: one consistent view.
   */
  saveTo(dir: string): void {
    writeGeneration(dir, generationFormat(this.#storage.format), (out) => this.#storage.save(out, ''))
  }

  /**
   * Replaces the state with the one `saveTo` wrote into `dir` (all or nothing: a failing load
   * leaves the current state; every file is checked before it is read). Call it before serving
   * writes: a write in flight would apply to the replaced state.
   */
  loadFrom(dir: string): void {
    const { format, load } = this.#storage
    const found = readGeneration(
      dir,
      generationFormat(format),
      (generation) => {
        load(generation.folder, generation.sumOf)
        return true
      },
      // Index snapshots inside are checked by loadIndex as it reads them.
      { nested: true },
    )
    if (!found) throw new QuarryError('INVALID_SNAPSHOT', `${resolve(dir)} holds no ${format.engine} save (no CURRENT): save one there with saveTo first.`)
  }

  /** @internal The state as steps into `folder` of a generation being written (a server's data folder); hold writes off with `exclusive`. */
  saveSteps(out: GenerationWriter, folder: string): Steps {
    return this.#storage.save(out, folder)
  }

  /** @internal Replaces the state with the one `saveSteps` wrote into `dir` (already checked by its generation, whose `sumOf` it is given). */
  loadFolder(dir: string, sumOf: (path: string) => FileSum | undefined = () => undefined): void {
    this.#storage.load(dir, sumOf)
  }

  /**
   * @internal Sends each write that no log records (an in-process caller's) through `route`,
   * before it takes this engine's lock: how a server with a data folder orders such writes with
   * its own and saves them. Returns what stops it.
   */
  routeUnloggedWrites(route: UnloggedRoute): () => void {
    return this.#writes.routeUnloggedWrites(route)
  }

  /** @internal Runs `fn` with this engine's writes held off (queued behind it). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const storage = this.#storage
    return this.#writes.run(() => (storage.hold ? storage.hold(fn) : fn()))
  }
}
