import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker, type ResourceLimits } from 'node:worker_threads'
import { PACKAGE_ROOT } from '../package-root.js'

/**
 * Starts a thread running one of this folder's worker entries: built, the bundle's entry
 * (scripts/bundle.mjs), which is what the package ships; or in the workspace its TypeScript source
 * through bin/sources.mjs (tsx, a dev dependency; not in the published package).
 */
export function startThread(entry: 'analysis-worker' | 'bounded-worker', name: string, resourceLimits?: ResourceLimits): Worker {
  const limits = resourceLimits ? { resourceLimits } : {}
  if (!import.meta.url.endsWith('.ts')) return new Worker(join(PACKAGE_ROOT, 'dist', 'bundle', 'vertex-rag', `${entry}.js`), { name, ...limits })
  const sources = pathToFileURL(join(PACKAGE_ROOT, 'bin', 'sources.mjs')).href
  const source = pathToFileURL(join(PACKAGE_ROOT, 'src', 'vertex-rag', `${entry}.ts`)).href
  return new Worker(`import(${JSON.stringify(sources)}).then((m) => m.loadSource(${JSON.stringify(source)}))`, { eval: true, name, ...limits })
}

/**
 * Called on a worker thread: gives it a lower CPU priority (nice 10) than the thread that answers
 * requests, so that reading files yields the CPU to requests on a busy machine. Linux only, where
 * a thread has a nice value of its own (its id from /proc/thread-self); elsewhere nothing changes.
 */
export function yieldCpuToRequests(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10)
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}
