import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeManifest, type Manifest } from '../../packages/core/src/persist/manifest.js'
import { QUARRY_BIN, startServe } from '../support/quarry-process.js'

// Issue 41's crafted graph against the real `quarry serve`: a data folder whose hnsw.bin is
// rewritten and re-sealed (the index's manifest and the folder's both carry its new sha256, as
// anyone who can write the folder could do). The server refuses to start, exit 1 with the loader's
// reason and the file's name, instead of starting and crashing on the first add (exit 139) or
// reserving gigabytes.

let dir: string
let data: string
/** The graph's folder inside the data folder's current generation, relative to it. */
let index: string
let generation: string
/** How long the first start took: the deadline of the refusals is a multiple of it. */
let startMs = 0

const post = async (base: string, path: string, body: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(res.status, path).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

const sum = (bytes: Buffer): { bytes: number; sha256: string } => ({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') })

/** A copy of the data folder with its graph replaced by `alter(graph)`, both manifests re-sealed over it. */
function crafted(name: string, alter: (graph: Buffer) => Buffer): string {
  const copy = join(dir, name)
  cpSync(data, copy, { recursive: true })
  const folder = join(copy, generation, index)
  const graph = alter(readFileSync(join(folder, 'hnsw.bin')))
  writeFileSync(join(folder, 'hnsw.bin'), graph)
  const innerPath = join(folder, 'manifest.json')
  const inner = JSON.parse(readFileSync(innerPath, 'utf8')) as { manifest: Manifest }
  const innerBytes = encodeManifest({ ...inner.manifest, files: { ...inner.manifest.files, 'hnsw.bin': sum(graph) } })
  writeFileSync(innerPath, innerBytes)
  const outerPath = join(copy, generation, 'manifest.json')
  const outer = JSON.parse(readFileSync(outerPath, 'utf8')) as { manifest: Manifest }
  const files = { ...outer.manifest.files, [`${index}/hnsw.bin`]: sum(graph), [`${index}/manifest.json`]: sum(innerBytes) }
  writeFileSync(outerPath, encodeManifest({ ...outer.manifest, files }))
  return copy
}

/** `quarry serve --data folder` run to its exit: its code, signal and output (it must not start serving). */
function refusedStart(folder: string): Promise<{ code: number | null; signal: string | null; output: string }> {
  const child = spawn(process.execPath, [QUARRY_BIN, 'serve', '--port', '0', '--embedder', 'hashing', '--data', folder], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString()
    // It started serving the crafted graph: stop it, and the caller's checks say so.
    if (output.includes('serving on')) child.kill('SIGKILL')
  })
  child.stderr.on('data', (c: Buffer) => (output += c.toString()))
  const deadline = Math.max(30_000, 10 * startMs)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`quarry serve neither served nor exited within ${deadline} ms: ${output}`))
    }, deadline)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, output })
    })
  })
}

function find(folder: string, name: string): string | undefined {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name)
    if (entry.isFile() && entry.name === name) return path
    if (entry.isDirectory()) {
      const found = find(path, name)
      if (found) return found
    }
  }
  return undefined
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-crafted-graph-'))
  data = join(dir, 'data')
  const started = performance.now()
  const served = await startServe(['--embedder', 'hashing', '--data', data])
  startMs = performance.now() - started
  await post(served.base, '/v1beta/corpora', { name: 'corpora/ships' })
  await post(served.base, '/v1beta/corpora/ships/documents', { name: 'corpora/ships/documents/log' })
  const requests = Array.from({ length: 30 }, (_, i) => ({ chunk: { data: { stringValue: `entry ${i}: the lighthouse saw ship number ${i * 7}` } } }))
  await post(served.base, '/v1beta/corpora/ships/documents/log/chunks:batchCreate', { requests })
  const exited = new Promise<number | null>((resolve) => served.child.once('exit', (code) => resolve(code)))
  served.child.kill('SIGTERM')
  expect(await exited).toBe(0)
  generation = readFileSync(join(data, 'CURRENT'), 'latin1').trim()
  const graph = find(join(data, generation), 'hnsw.bin')
  if (graph === undefined) throw new Error('the saved folder holds no hnsw.bin')
  index = relative(join(data, generation), dirname(graph))
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('quarry serve --data with a crafted hnsw.bin re-sealed in the manifests', () => {
  it('starts from the same folder re-sealed unaltered, with every chunk (the re-sealing is sound)', async () => {
    const served = await startServe(['--embedder', 'hashing', '--data', crafted('unaltered', (g) => g)])
    try {
      const answer = await post(served.base, '/v1beta/corpora/ships:query', { query: 'lighthouse ship number 21', resultsCount: 50 })
      const texts = (answer.relevantChunks as { chunk: { data: { stringValue: string } } }[]).map((r) => r.chunk.data.stringValue)
      expect(texts.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `entry ${i}: the lighthouse saw ship number ${i * 7}`).sort())
    } finally {
      await served.kill()
    }
  })

  it.each<[string, (graph: Buffer) => Buffer, string]>([
    // What crashed the server on its first add: an empty graph that names an entry point.
    ['an empty graph with an entry point', (g) => (g.writeBigUInt64LE(0n, 16), g.subarray(0, 96)), 'it is empty but has an entry point'],
    // What reserved gigabytes: room for 4 billion elements in a file of a few.
    ['room for 4 billion elements', (g) => (g.writeBigUInt64LE(0xffff_ffffn, 8), g), 'it reserves room for more elements than twice its count plus 1024'],
  ])('%s: refused at start, exit 1 naming the file and the reason; no crash', async (name, alter, reason) => {
    const { code, signal, output } = await refusedStart(crafted(name.replaceAll(' ', '-'), alter))
    expect({ code, signal }).toEqual({ code: 1, signal: null })
    expect(output).not.toContain('serving on')
    expect(output).toContain(`hnsw.bin could not be read: ${reason}.`)
  })
})
