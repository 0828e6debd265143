import { createRequire } from 'node:module'
import { expect, it } from 'vitest'
import { describeSnapshotFuzz } from '../support/snapshot-fuzz.js'

// The same property as snapshot-fuzz.test.ts on the WebAssembly graph: QUARRY_HNSW is read at
// @quarry/hnsw's first require, which @quarry/core makes only when an index first needs a graph.
process.env.QUARRY_HNSW = 'wasm'
const { backend } = createRequire(import.meta.url)('@quarry/hnsw') as { backend: string }

describeSnapshotFuzz('wasm')

it('runs on the WebAssembly build', () => {
  expect(backend).toBe('wasm')
})
