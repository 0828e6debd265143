import { embedAll, type Embedder } from '@quarry/core'
import type { Clock } from './clock.js'
import type { RandomId } from './names.js'
import { numericId } from './operations.js'
import { failure } from './status.js'
import { decodeVectors, encodeVectors, replayable } from './replay.js'

/** The options every adapter engine has. */
interface EngineBasics {
  readonly embedder: Embedder
  readonly clock: Clock
  readonly randomId: RandomId
  readonly onInternalError: (error: unknown) => void
}

/**
 * What the three adapters' contexts share: the time, creation stamps (a sequence number that
 * orders lists and page cursors), generated ids, and embedding whose failure is the server's.
 */
export abstract class EngineContext<O extends EngineBasics> {
  readonly options: O
  protected abstract readonly sequence: { seq: number }

  constructor(options: O) {
    this.options = options
  }

  now(): number {
    return this.options.clock().getTime()
  }

  /** A creation stamp: the next sequence number, at `ms` (default: now). */
  stamp(ms: number = this.now()): { seq: number; createMs: number; updateMs: number } {
    return { seq: this.sequence.seq++, createMs: ms, updateMs: ms }
  }

  /** A numeric resource id, as Vertex generates them. */
  numericId(): string {
    return numericId(this.options.randomId)
  }

  /**
   * Embeds texts; an embedder failure is INTERNAL (reported to onInternalError), and nothing is written.
   * `compute` may get the vectors another way (a batch shared with other texts); whichever way, the
   * vectors are recorded for replay as this write's.
   */
  async embed(texts: readonly string[], compute: (texts: readonly string[]) => Promise<Float32Array[]> = (t) => embedAll(this.options.embedder, t)): Promise<Float32Array[]> {
    try {
      return await replayable('embed', () => compute(texts), encodeVectors, decodeVectors)
    } catch (error) {
      this.options.onInternalError(error)
      throw failure('INTERNAL', `The embedder "${this.options.embedder.name}" failed; nothing was written. Retry the request.`)
    }
  }
}
