import { join } from 'node:path'
import { isInside, stampOf, unchangedSince, type FileStamp } from './files.js'
import type { GenerationFile, GenerationWriter } from './generations.js'
import type { FileSum } from './manifest.js'
import type { Steps } from './steps.js'

/** The copy of a file a committed generation holds, and the revision of its content it was written at. */
interface Copy {
  readonly path: string
  readonly sum: FileSum
  readonly stamp: FileStamp
  readonly revision: number
}

/**
 * A file that every generation of a folder holds anew (an engine's list of one corpus's
 * resources, beside that corpus's index snapshot), written only when what it holds has changed:
 * its owner calls {@link changed} before every change to that content, and a save while none was
 * made since the last copy committed (or read) hard-links that copy into the new generation
 * instead of writing it. As for an index's snapshot (QuarryIndex.save), a copy is linked only into
 * a generation of the same folder, only while it is the file committed (same device, inode, size
 * and modification time: not replaced or written since), and when a link fails (another
 * filesystem, no hard links) the file is written.
 */
export class LinkableFile {
  #revision = 0
  #copy: Copy | undefined

  /** Counts a change to the file's content: the next save writes it. */
  changed(): void {
    this.#revision++
  }

  /**
   * Writes the file `name` of the generation being written with `write`, or links the last copy
   * when the content has not changed since it. Once the generation is committed, its file is the
   * copy the next save links; if it fails, the copy before it still is.
   */
  *save(out: GenerationWriter, name: string, write: (file: GenerationFile) => Steps): Steps {
    const before = this.#copy
    const revision = this.#revision
    out.onSettled((committed) => {
      if (committed === undefined) {
        this.#copy = before
        return
      }
      const path = join(committed.folder, ...name.split('/'))
      const sum = committed.files[name]
      this.#copy = sum === undefined ? undefined : { path, sum, stamp: stampOf(path), revision }
    })
    if (before !== undefined && before.revision === revision && isInside(before.path, out.root) && unchangedSince(before.path, before.stamp)) {
      try {
        out.link(name, before.path, before.sum)
        return
      } catch {
        out.drop(name)
      }
    }
    const file = out.create(name)
    yield* write(file)
    yield* file.finish()
  }

  /**
   * Records `path`, a file of a generation just read whose content is the current one, and `sum`,
   * its size and sha256 as the generation's checked manifest gives them (see
   * GenerationView.sumOf): the next save links it while nothing changes. Stamped now: take it
   * before reading the file, so that a change made while it is read is a change since its stamp.
   */
  read(path: string, sum: FileSum | undefined): void {
    this.#copy = sum === undefined ? undefined : { path, sum, stamp: stampOf(path), revision: this.#revision }
  }
}
