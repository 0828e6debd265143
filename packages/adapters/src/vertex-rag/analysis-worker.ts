import { parentPort } from 'node:worker_threads'
import { analyzeSource, toWire, type SourceJob } from './analysis.js'

/**
 * The import worker's thread (started by import-worker.ts): reads, hashes and chunks the files an
 * import sends it, one message per file, and posts each back with the bytes' buffer moved. Every
 * message gets an answer: the analysis, or an error (the calling thread then does the file itself).
 */
async function answer(message: { readonly id: number; readonly job: SourceJob }): Promise<void> {
  try {
    const { wire, transfer } = toWire(await analyzeSource(message.job))
    parentPort?.postMessage({ id: message.id, wire }, transfer)
  } catch (error) {
    parentPort?.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) })
  }
}

parentPort?.on('message', (message: { readonly id: number; readonly job: SourceJob }) => void answer(message))
// A message that cannot be read has no id to answer: the thread stops, and the calling thread does its files.
parentPort?.on('messageerror', () => process.exit(1))
