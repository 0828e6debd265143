import { fork, type ChildProcess } from 'node:child_process'
import * as fs from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { FuzzReply, FuzzRequest } from '../support/graph-fuzz-child.js'
import { baseGraphs, exercise, fuzzCaseArb, mutated, type FuzzCase, type Outcome } from '../support/graph-fuzz.js'
import { NATIVE_FILE, WasmGraph, type GraphBuild } from '../support/graph-builds.js'
import { runs } from '../support/runs.js'

// The saved-graph loader as a trust boundary (packages/hnsw/src/saved-graph.h): mutated and
// truncated graph bytes (support/graph-fuzz.ts) are refused with one of the loader's own messages,
// or load into a graph that searches, grows, deletes and saves like any other. Neither build
// crashes (the native one runs in a child process, so a crash is a failed case with its seed) or
// lets a file make it allocate more than a small multiple of its size; both make the same thing
// of the same bytes.

const dir = fs.mkdtempSync(join(tmpdir(), 'quarry-graph-fuzz-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const bases = baseGraphs(WasmGraph, dir)
const arb = fuzzCaseArb(bases.length)

// A fresh WebAssembly instance per case, so its memory's growth is this case's alone.
const hnsw = new URL('../../packages/hnsw/wasm/', import.meta.url)
const { instantiateSync } = createRequire(hnsw)('./graph.cjs') as { instantiateSync(wasm: object, fs: object): { Graph: GraphBuild; memoryBytes(): number } }
// Node's WebAssembly global, typed here: the repository's TypeScript has no DOM lib.
const { Module } = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } }).WebAssembly
const wasmModule = new Module(fs.readFileSync(new URL('quarry_hnsw.wasm', hnsw)))

/**
 * What a case may make a build allocate: a few times the file (a loaded graph keeps room for twice
 * its count plus 1024, and the case saves and loads it once more) plus a fixed part, what two new
 * graphs take (hnswlib's 65,536 label locks each, and in the child process the allocator's and V8's
 * own noise).
 */
const budget = (bytes: Uint8Array, fixed: number): number => 16 * bytes.length + fixed
const WASM_FIXED = 8 << 20
const NATIVE_FIXED = 32 << 20

function inWasm(c: FuzzCase): { outcome: Outcome; grew: number; bytes: Uint8Array } {
  const base = bases[c.base] as (typeof bases)[number]
  const bytes = mutated(base, c)
  const { Graph, memoryBytes } = instantiateSync(wasmModule, fs)
  const before = memoryBytes()
  const outcome = exercise(Graph, base, bytes, c.seed, join(dir, 'wasm.bin'))
  return { outcome, grew: memoryBytes() - before, bytes }
}

describe('crafted graph bytes', () => {
  it('the WebAssembly build refuses them with its own message or uses them safely, within a small multiple of their size', () => {
    let loaded = 0
    fc.assert(
      fc.property(arb, (c) => {
        const { outcome, grew, bytes } = inWasm(c)
        expect(outcome.violations).toEqual([])
        expect(grew, `memory grew ${grew} bytes for a ${bytes.length}-byte file`).toBeLessThanOrEqual(budget(bytes, WASM_FIXED))
        if (outcome.refused === undefined) loaded += 1
      }),
      { numRuns: runs(200) },
    )
    // Both kinds of case ran: some mutations leave a graph that loads (e.g. a vector's bits).
    expect(loaded).toBeGreaterThan(0)
  })

  it.skipIf(NATIVE_FILE === undefined)('the native build does the same in a child process that never crashes, and makes of each case what the WebAssembly build makes', async () => {
    const child = new NativeChild(NATIVE_FILE as string)
    try {
      // The unmutated graphs first: they load in both, and how long they take sets the deadline.
      for (const [i, base] of bases.entries()) {
        const started = performance.now()
        const reply = await child.run({ base, bytes: base.bytes, seed: 1 }, 120_000)
        child.deadline = Math.max(child.deadline, 200 * (performance.now() - started))
        expect(reply.outcome, `base graph ${i}`).toMatchObject({ refused: undefined, violations: [] })
      }
      await fc.assert(
        fc.asyncProperty(arb, async (c) => {
          const wasm = inWasm(c)
          const base = bases[c.base] as (typeof bases)[number]
          const reply = await child.run({ base, bytes: wasm.bytes, seed: c.seed })
          expect(reply.outcome.violations).toEqual([])
          expect(reply.grew, `resident memory grew ${reply.grew} bytes for a ${wasm.bytes.length}-byte file`).toBeLessThanOrEqual(budget(wasm.bytes, NATIVE_FIXED))
          expect(reply.outcome.refused).toEqual(wasm.outcome.refused)
          expect(reply.outcome.answers).toEqual(wasm.outcome.answers)
        }),
        { numRuns: runs(200) },
      )
    } finally {
      child.close()
    }
  })
})

/** The child process of support/graph-fuzz-child.ts, started again after it dies. */
class NativeChild {
  #proc: ChildProcess | undefined
  #ready: Promise<void> | undefined
  /** Milliseconds a case may take: set from the unmutated graphs' time. */
  deadline = 2_000

  constructor(readonly binary: string) {}

  #start(): Promise<void> {
    const proc = fork(fileURLToPath(new URL('../support/graph-fuzz-child.ts', import.meta.url)), [this.binary, dir], {
      execArgv: ['--conditions=quarry-source', '--import', 'tsx'],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.#proc = proc
    proc.once('exit', () => {
      if (this.#proc === proc) this.#proc = undefined
    })
    return new Promise((resolve, reject) => {
      proc.once('message', () => resolve())
      proc.once('exit', (code, signal) => reject(new Error(`the fuzz child exited (${signal ?? code}) before it was ready`)))
    })
  }

  async run(request: FuzzRequest, deadline = this.deadline): Promise<FuzzReply> {
    if (this.#proc === undefined) this.#ready = this.#start()
    await this.#ready
    const proc = this.#proc as ChildProcess
    return await new Promise<FuzzReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.kill('SIGKILL')
        reject(new Error(`the native graph gave no answer in ${Math.round(deadline)} ms`))
      }, deadline)
      const onExit = (code: number | null, signal: string | null): void => {
        clearTimeout(timer)
        reject(new Error(`the native graph's process died (${signal ?? `exit ${code}`}) on this case`))
      }
      proc.once('exit', onExit)
      proc.once('message', (reply: FuzzReply) => {
        clearTimeout(timer)
        proc.off('exit', onExit)
        resolve(reply)
      })
      proc.send(request)
    })
  }

  close(): void {
    this.#proc?.kill()
  }
}
