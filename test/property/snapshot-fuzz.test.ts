import { createRequire } from 'node:module'
import { expect, it } from 'vitest'
import { describeSnapshotFuzz } from '../support/snapshot-fuzz.js'

// Every snapshot section crafted behind a re-sealed manifest (support/snapshot-fuzz.ts), on the
// graph build this machine loads by default (the native one where it loads).

const { backend } = createRequire(import.meta.url)('@quarry/hnsw') as { backend: string }

describeSnapshotFuzz(backend)

it('runs on the build the loader chose', () => {
  expect(['native', 'wasm']).toContain(backend)
})
