import type { Worker } from 'node:worker_threads'
import { startEvalWorker } from '../util/eval-worker.js'

/**
 * Refreshes the modification time of the LOCKs this process holds (persist/lock.ts), from a worker
 * thread: another host judges a LOCK by whether it is refreshed, and a main thread busy for
 * seconds (a large load or synchronous save, a LOCK being watched) must not let its own locks look
 * dead. One worker for the process, started with the first lock and let go 30 s after the last
 * is released; it never keeps the process alive. The worker opens each LOCK itself and keeps it
 * open until told to let go (so it touches that file and no other, even if LOCK is replaced).
 */

/** What the worker runs: `add` opens a LOCK (if it is still the file the lock took) and refreshes it; `remove` closes it. */
const SOURCE = `'use strict'
Promise.all([import('node:worker_threads'), import('node:fs')]).then(([{ parentPort, workerData }, fs]) => {
  const open = new Map()
  const touch = (fd) => {
    try {
      const now = new Date()
      fs.futimesSync(fd, now, now)
    } catch {}
  }
  parentPort.on('message', (m) => {
    if (m.add !== undefined) {
      try {
        const fd = fs.openSync(m.add.path, 'r')
        const s = fs.fstatSync(fd)
        if (s.dev === m.add.dev && s.ino === m.add.ino) {
          open.set(m.add.id, fd)
          touch(fd)
        } else fs.closeSync(fd)
      } catch {}
    } else {
      const fd = open.get(m.remove)
      open.delete(m.remove)
      if (fd !== undefined) try { fs.closeSync(fd) } catch {}
    }
  })
  setInterval(() => { for (const fd of open.values()) touch(fd) }, workerData.refreshMs)
})
`

/** How often a held LOCK's modification time is refreshed, ms (a LOCK says so: its `refreshMs`). */
export const REFRESH_MS = 1_000

/** How long the worker stays once no lock is held: a program saving in a loop keeps one worker. */
const IDLE_MS = 30_000

let worker: Worker | undefined
let failed = false
let held = 0
let nextId = 0
let idle: ReturnType<typeof setTimeout> | undefined

/**
 * Starts refreshing `path` (LOCK, as the file `dev`/`ino` a lock took) every {@link REFRESH_MS};
 * returns the call that stops it, or undefined when no worker can run here (the caller refreshes it
 * itself).
 */
export function refreshLock(path: string, dev: number, ino: number): (() => void) | undefined {
  if (failed) return undefined
  if (worker === undefined) {
    try {
      worker = startEvalWorker(SOURCE, { name: 'quarry-lock-refresh', workerData: { refreshMs: REFRESH_MS } })
    } catch {
      failed = true
      return undefined
    }
    worker.unref()
    // Gone (out of resources, terminated): the locks taken from now on are refreshed by their own thread.
    worker.on('error', () => {
      failed = true
      worker = undefined
    })
  }
  clearTimeout(idle)
  const id = ++nextId
  const own = worker
  own.postMessage({ add: { id, path, dev, ino } })
  held++
  let stopped = false
  return () => {
    if (stopped) return
    stopped = true
    own.postMessage({ remove: id })
    if (--held > 0 || own !== worker) return
    idle = setTimeout(() => {
      if (held > 0 || own !== worker) return
      worker = undefined
      void own.terminate()
    }, IDLE_MS)
    idle.unref()
  }
}
