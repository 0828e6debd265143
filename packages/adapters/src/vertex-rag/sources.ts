import { constants, type Stats } from 'node:fs'
import { lstat, mkdir, open, readdir, readlink, realpath, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SHARED_ABOVE_BYTES } from '../rpc/shared-bytes.js'
import { failure, invalidArgument, rpcStatus, type RpcStatus } from '../rpc/status.js'
import type { ImportRoot } from './options.js'

/**
 * Import URIs → the local files they name, read safely: `file://` only under the import roots
 * (when there are roots), `gs://bucket/path` only under the Cloud Storage folder; symlinks are
 * followed and must stay inside a root; only regular files are read (never a FIFO, device or
 * socket), each at most `maxFileBytes`; the file count and folder depth are checked while walking.
 * An entry that cannot be read fails alone; a request that names too much fails whole, early.
 */

/** Where imports may read from. */
export interface SourceRoots {
  /** Folders `file://` URIs may name. `undefined`: trusted caller, any path. `[]`: no file:// at all. */
  readonly importRoots: readonly ImportRoot[] | undefined
  /** The folder standing in for Cloud Storage (real path), if any. */
  readonly gcsRoot: string | undefined
}

interface SourceLimits {
  readonly maxFiles: number
  readonly maxDepth: number
  readonly maxFileBytes: number
}

/** A regular file an import reads: its URI (how messages name it) and its real path (never shown). */
export interface SourceFile {
  readonly uri: string
  readonly path: string
  /** The real roots the file must lie in when it is opened (undefined: a trusted caller's, any path). */
  readonly roots?: readonly string[]
  /** Device and inode seen by the walk: the file opened later must be the same one. */
  readonly identity?: { readonly dev: number; readonly ino: number }
  /** Bytes the walk saw (what an import reads ahead is counted by it; the read checks the file's real size). */
  readonly size?: number
}

interface Located {
  readonly files: readonly SourceFile[]
  /** Entries that fail alone (missing, unreadable, not a regular file, a link out of the roots). */
  readonly failures: readonly RpcStatus[]
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}

/** The lexical local path of a URI and the real roots it must stay in. Throws for the whole request. */
function lexicalPath(uri: string, roots: SourceRoots, field: string): { path: string; roots: readonly string[] | undefined } {
  if (uri.startsWith('file://')) {
    let path: string
    try {
      path = fileURLToPath(uri)
    } catch {
      throw invalidArgument(field, `"${uri}" is not a valid file:// URI (file:///absolute/path).`)
    }
    if (roots.importRoots === undefined) return { path, roots: undefined }
    if (roots.importRoots.length === 0) {
      throw failure('PERMISSION_DENIED', `"${uri}": file:// imports are off. Start quarry serve with --import-root DIR (repeatable), or pass the importRoots option, to allow the folders imports may read.`, field)
    }
    // Checked on the path as written (no disk access outside the roots), then again on the real path.
    // The message does not name the roots: a client learns no local path it did not send.
    if (!roots.importRoots.some((root) => inside(path, root.given) || inside(path, root.real))) {
      throw failure('PERMISSION_DENIED', `"${uri}" is outside the import roots; add its folder with --import-root DIR or the importRoots option.`, field)
    }
    return { path, roots: roots.importRoots.map((r) => r.real) }
  }
  const gs = /^gs:\/\/([^/]+)(\/.*)?$/.exec(uri)
  if (gs) {
    const base = roots.gcsRoot
    if (base === undefined) throw failure('FAILED_PRECONDITION', `"${uri}" is a Cloud Storage URI; start Quarry with --gcs-root DIR (the gcsRoot option: a local folder standing in for Cloud Storage) or import file:// URIs.`, field)
    const path = resolve(base, gs[1] as string, `.${gs[2] ?? '/'}`)
    if (path === base || !inside(path, base)) throw invalidArgument(field, `"${uri}" points outside the Cloud Storage folder.`)
    return { path, roots: [base] }
  }
  throw invalidArgument(field, `"${uri}": gcsSource takes gs://bucket/path or file:///path URIs.`)
}

function errno(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'error'
}

/** Folder entries looked at at once while walking. */
const PROBE_WINDOW = 32

/** What a path is, links followed: its real path and stat, or why it cannot be imported. */
type Probe = { readonly kind: 'found'; readonly real: string; readonly info: Stats } | { readonly kind: 'failure'; readonly status: RpcStatus }

/** Follows a path's links and checks the real path against the roots (`allowed`), then stats it. */
async function probe(uri: string, path: string, allowed: readonly string[] | undefined): Promise<Probe> {
  let real: string
  try {
    real = await realpath(path)
  } catch (error) {
    // A dangling link answers as one leading out: which outside paths exist is not the client's to learn.
    if (allowed && (await isLink(path))) return { kind: 'failure', status: linkOut(uri) }
    return { kind: 'failure', status: rpcStatus('NOT_FOUND', errno(error) === 'ENOENT' ? `${uri}: no such file or folder.` : `${uri}: cannot be read (${errno(error)}).`) }
  }
  if (allowed && !allowed.some((root) => inside(real, root))) return { kind: 'failure', status: linkOut(uri) }
  try {
    return { kind: 'found', real, info: await stat(real) }
  } catch (error) {
    return { kind: 'failure', status: rpcStatus('NOT_FOUND', `${uri}: cannot be read (${errno(error)}).`) }
  }
}

/** Walks the URIs in order (folders sorted by name, depth first), collecting regular files. */
export async function locateSources(uris: readonly string[], roots: SourceRoots, limits: SourceLimits, fieldOf: (i: number) => string): Promise<Located> {
  // Every URI is checked before any is read: a bad one refuses the request without touching the disk.
  const starts = uris.map((uri, i) => ({ uri, ...lexicalPath(uri, roots, fieldOf(i)) }))
  const files: SourceFile[] = []
  const failures: RpcStatus[] = []
  const seenFiles = new Set<string>()
  const seenDirs = new Set<string>()
  // Directories count too: a tree of empty folders costs a walk without adding files.
  const maxEntries = limits.maxFiles * 10
  let entries = 0

  const tooMany = (): never => {
    throw invalidArgument('importRagFilesConfig.gcsSource.uris', `the URIs name more than ${limits.maxFiles} files (or ${maxEntries} files and folders); one import takes at most ${limits.maxFiles} files.`)
  }

  /** Visits one path (already lexically inside its roots): follows links, checks the real path, recurses into folders. */
  const visit = async (uri: string, path: string, allowed: readonly string[] | undefined, depth: number, probed?: Probe): Promise<void> => {
    if (++entries > maxEntries) tooMany()
    const found = probed ?? (await probe(uri, path, allowed))
    if (found.kind === 'failure') {
      failures.push(found.status)
      return
    }
    const { real, info } = found
    if (info.isFile()) {
      if (seenFiles.has(real)) return
      seenFiles.add(real)
      if (files.length >= limits.maxFiles) tooMany()
      files.push(allowed === undefined ? { uri, path: real, size: info.size } : { uri, path: real, roots: allowed, identity: { dev: info.dev, ino: info.ino }, size: info.size })
      return
    }
    if (!info.isDirectory()) {
      failures.push(rpcStatus('INVALID_ARGUMENT', `${uri}: not a regular file (a device, FIFO or socket); not read.`))
      return
    }
    if (seenDirs.has(real)) return
    seenDirs.add(real)
    if (depth >= limits.maxDepth) {
      failures.push(rpcStatus('INVALID_ARGUMENT', `${uri}: folders nest deeper than ${limits.maxDepth} levels below the imported URI; not read (the maxImportDepth option).`))
      return
    }
    let names: string[]
    try {
      names = (await readdir(real)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    } catch (error) {
      failures.push(rpcStatus('NOT_FOUND', `${uri}: the folder cannot be read (${errno(error)}).`))
      return
    }
    // A folder's entries are looked at PROBE_WINDOW at a time (each is two round trips to the
    // system), then taken one by one in name order: the same files, failures and limits as one by one.
    const base = uri.replace(/\/+$/, '')
    for (let at = 0; at < names.length; at += PROBE_WINDOW) {
      const window = names.slice(at, at + PROBE_WINDOW).map((name) => ({ uri: `${base}/${encodeSegment(name)}`, path: join(real, name) }))
      const probes = await Promise.all(window.map((e) => probe(e.uri, e.path, allowed)))
      for (const [k, e] of window.entries()) await visit(e.uri, e.path, allowed, depth + 1, probes[k])
    }
  }

  for (const start of starts) await visit(start.uri, start.path, start.roots, 0)
  return { files, failures }
}

function linkOut(uri: string): RpcStatus {
  return rpcStatus('PERMISSION_DENIED', `${uri}: a link that does not lead to a file inside the ${uri.startsWith('gs://') ? 'Cloud Storage folder' : 'import roots'}; not read.`)
}

async function isLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink()
  } catch {
    return false
  }
}

/** A folder entry's name inside a URI: as is, unless it holds characters a URI cannot. */
function encodeSegment(name: string): string {
  return /^[\w.~!$&'()*+,;=:@-]+$/.test(name) ? name : encodeURIComponent(name)
}

/** The path of an open file as the system knows it (/proc/self/fd on Linux); undefined elsewhere. */
async function openedPath(fd: number): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}

export type ReadResult = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly status: RpcStatus }

/**
 * A buffer to read a file into, alone in its memory (never Node's shared pool: analysis.ts moves
 * it between threads) and not zeroed on this thread (for a big file, milliseconds): the caller
 * zeroes what the reads leave unwritten. A big one is shared memory, which the threads that analyze
 * the file (bounded-analysis.ts) and the import worker's answers pass on without a copy.
 */
function readBuffer(size: number): Buffer {
  return size > SHARED_ABOVE_BYTES ? Buffer.from(new SharedArrayBuffer(size)) : Buffer.allocUnsafeSlow(size)
}

/**
 * Reads one located file: opened without following links and without blocking (a file swapped
 * for a FIFO after the walk cannot stall the server), checked to be a regular file of at most
 * `maxBytes`, and read no further than one byte past that (a file that grows meanwhile fails).
 */
export async function readSource(file: SourceFile, maxBytes: number): Promise<ReadResult> {
  let handle
  try {
    handle = await open(file.path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
  } catch (error) {
    return { ok: false, status: rpcStatus('NOT_FOUND', `${file.uri}: cannot be read (${errno(error)}).`) }
  }
  try {
    // A folder on the path swapped for a link after the walk would lead elsewhere (O_NOFOLLOW guards
    // the last name only): check what was really opened, where the system can say (Linux).
    if (file.roots !== undefined) {
      const opened = await openedPath(handle.fd)
      if (opened !== undefined && !file.roots.some((root) => inside(opened, root))) {
        return { ok: false, status: rpcStatus('PERMISSION_DENIED', `${file.uri}: it changed into a link that leads outside the roots; not read.`) }
      }
    }
    const info = await handle.stat()
    if (!info.isFile()) return { ok: false, status: rpcStatus('INVALID_ARGUMENT', `${file.uri}: not a regular file; not read.`) }
    if (file.identity !== undefined && (info.dev !== file.identity.dev || info.ino !== file.identity.ino)) {
      return { ok: false, status: rpcStatus('ABORTED', `${file.uri}: the file was replaced while the import ran; import it again.`) }
    }
    // A hard link in a root is the same file as its twin outside it: confined reads take files with one name only.
    if (file.roots !== undefined && info.nlink > 1) {
      return { ok: false, status: rpcStatus('PERMISSION_DENIED', `${file.uri}: a file with more than one name (a hard link); confined imports read only files with one name, so copy it instead.`) }
    }
    if (info.size > maxBytes) return { ok: false, status: rpcStatus('INVALID_ARGUMENT', `${file.uri}: ${info.size} bytes; a file takes at most ${maxBytes} (maxFileBytes).`) }
    // Sizes can lie (files under /proc say 0): read until the end, never past maxBytes + 1. A size
    // given is trusted for the first buffer (a byte more, to see the end): the buffer moves to the
    // calling thread with the bytes, so a 64 KiB one for every small file would be memory held for nothing.
    let buffer = readBuffer(Math.min(maxBytes + 1, info.size > 0 ? info.size + 1 : 64 * 1024))
    let length = 0
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) return { ok: false, status: rpcStatus('INVALID_ARGUMENT', `${file.uri}: larger than ${maxBytes} bytes; a file takes at most ${maxBytes} (maxFileBytes).`) }
        const grown = readBuffer(Math.min(maxBytes + 1, buffer.length * 2))
        buffer.copy(grown)
        buffer = grown
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
      if (bytesRead === 0) break
      length += bytesRead
    }
    if (!(buffer.buffer instanceof SharedArrayBuffer)) buffer.fill(0, length)
    return { ok: true, bytes: buffer.subarray(0, length) }
  } catch (error) {
    return { ok: false, status: rpcStatus('NOT_FOUND', `${file.uri}: cannot be read (${errno(error)}).`) }
  } finally {
    await handle.close()
  }
}

/**
 * The local path of a gs:// destination under the Cloud Storage folder (import results Quarry
 * writes). Refused as imports are: no folder configured, a URI that is not gs://, or one leading out.
 */
export function gcsDestinationPath(uri: string, gcsRoot: string | undefined, field: string): string {
  if (!/^gs:\/\/[^/]+/.test(uri)) throw invalidArgument(field, `"${uri}": a Cloud Storage destination is a gs://bucket/folder URI.`)
  return lexicalPath(uri, { importRoots: [], gcsRoot }, field).path
}

/**
 * Writes `content` to `path` inside `root` (a real path): missing folders are made one by one, and
 * none may be (or lead through) a link out of the root; the file is written beside and renamed
 * over the target (a link there is replaced, never followed). Resolves to a Status on failure.
 */
export async function writeInside(root: string, path: string, content: string): Promise<RpcStatus | undefined> {
  const folder = dirname(path)
  try {
    let at = root
    for (const part of relative(root, folder).split(sep).filter((p) => p !== '')) {
      at = join(at, part)
      try {
        await mkdir(at)
      } catch (error) {
        if (errno(error) !== 'EEXIST') throw error
      }
      const real = await realpath(at)
      if (!inside(real, root) || !(await stat(real)).isDirectory()) return rpcStatus('PERMISSION_DENIED', 'a folder of the destination is a link out of the Cloud Storage folder, or not a folder; nothing written.')
    }
    // A name of its own beside the target (one left by a crash is replaced; a link there is removed, not followed).
    const temporary = `${path}.${process.pid}.tmp`
    await rm(temporary, { force: true })
    await writeFile(temporary, content, { flag: 'wx' })
    try {
      await rename(temporary, path)
    } catch (error) {
      await rm(temporary, { force: true })
      throw error
    }
    return undefined
  } catch (error) {
    return rpcStatus('INTERNAL', `the file could not be written (${errno(error)}).`)
  }
}
