import { parentPort } from 'node:worker_threads'
import { analyzeSource, toWire, type SourceJob } from './analysis.js'

/**
 * The import worker's thread (started by import-worker.ts): reads, hashes and chunks the files an
 * import sends it, one message per file, and posts each back with the bytes' buffer moved.
 */
parentPort?.on('message', (message: { readonly id: number; readonly job: SourceJob }) => {
  analyzeSource(message.job).then(
    (result) => {
      const { wire, transfer } = toWire(result)
      parentPort?.postMessage({ id: message.id, wire }, transfer)
    },
    (error: unknown) => parentPort?.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  )
})
