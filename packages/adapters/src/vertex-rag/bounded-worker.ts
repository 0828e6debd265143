import { parentPort } from 'node:worker_threads'
import { analysisToWire, analyzeHere, type AnalysisInput } from './analysis.js'

/**
 * A file's thread (started by bounded-analysis.ts): extracts and chunks one file per message and
 * posts the analysis back, the chunks as offsets into the text (one copy of the text crosses).
 * The calling thread terminates it when the file runs over its time bound.
 */
async function answer(job: AnalysisInput): Promise<void> {
  try {
    const wire = analysisToWire(await analyzeHere(job))
    parentPort?.postMessage({ analysis: wire }, wire.ok ? [wire.pieces.buffer as ArrayBuffer] : [])
  } catch (error) {
    parentPort?.postMessage({ error: error instanceof Error ? error.name : 'error' })
  }
}

parentPort?.on('message', (job: AnalysisInput) => void answer(job))
parentPort?.postMessage({ ready: true })
