import { Worker, type WorkerOptions } from 'node:worker_threads'

/**
 * Starts a worker thread running `source`, self-contained JavaScript (nothing to resolve on disk).
 * Node evaluates such a string as CommonJS, or as a module when the process was started with
 * `--input-type=module` (`node --input-type=module -e …`: workers inherit the flag), so the source
 * must run as either: it takes Node's modules with `import()`, which both have, never with
 * `require` (which a module lacks: the worker would die before its first line).
 */
export function startEvalWorker(source: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  if (/\brequire\s*\(/.test(source)) throw new Error('internal error: a worker source calls require(); take modules with import()')
  return new Worker(source, { ...options, eval: true })
}
