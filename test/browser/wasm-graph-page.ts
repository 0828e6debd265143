import { instantiate } from '@quarry/hnsw/wasm/instantiate'

// What wasm-graph.test.ts runs inside Chromium, bundled with esbuild for the browser: fetch
// quarry_hnsw.wasm, instantiate it, then for each case build a graph from the served vectors and
// load the graph the native build saved, and search both. Answers go back as plain arrays, the
// distances as their float32 bit patterns so the test compares them bit for bit.

/** One graph to build and one to load, every input a URL on the test's server. */
export interface PageCase {
  readonly space: 'l2' | 'ip'
  readonly dim: number
  /** `count` × `dim` float32: point i is added with label 3·i. */
  readonly points: string
  readonly count: number
  readonly init: { readonly m: number; readonly efConstruction: number; readonly seed: number }
  readonly deleted: readonly number[]
  /** The bytes the native build saved of the same graph. */
  readonly saved: string
  /** float32 queries of `dim` each. */
  readonly queries: string
  /** A bitset of allowed labels (Uint32 words). */
  readonly allow: string
  readonly k: number
  readonly ef: number
}

export interface PageAnswer {
  readonly labels: number[]
  /** The distances' float32 bits. */
  readonly distanceBits: number[]
}

export interface PageResult {
  readonly built: { readonly size: number; readonly plain: PageAnswer[]; readonly filtered: PageAnswer[] }
  readonly loaded: { readonly size: number; readonly plain: PageAnswer[]; readonly filtered: PageAnswer[] }
  /** What saveSync says in a page (no node:fs). */
  readonly saveRefusal: string
}

/** The function the page puts on globalThis.quarryWasmGraph. */
export type RunPage = (wasmUrl: string, cases: readonly PageCase[]) => Promise<PageResult[]>

async function bytesOf(url: string): Promise<ArrayBuffer> {
  const response = await fetch(url)
  if (!response.ok) throw new Error(`${url}: ${response.status}`)
  return response.arrayBuffer()
}

const run: RunPage = async (wasmUrl, cases) => {
  const { Graph } = await instantiate(new Uint8Array(await bytesOf(wasmUrl)))
  type Graph = InstanceType<typeof Graph>

  const answers = (graph: Graph, queries: Float32Array, dim: number, k: number, allow?: Uint32Array): PageAnswer[] => {
    const out: PageAnswer[] = []
    for (let at = 0; at + dim <= queries.length; at += dim) {
      const labels = new Uint32Array(k)
      const distances = new Float32Array(k)
      const n = graph.search(queries.subarray(at, at + dim), k, labels, distances, allow)
      out.push({ labels: Array.from(labels.subarray(0, n)), distanceBits: Array.from(new Uint32Array(distances.buffer, 0, n)) })
    }
    return out
  }

  const results: PageResult[] = []
  for (const c of cases) {
    const points = new Float32Array(await bytesOf(c.points))
    const queries = new Float32Array(await bytesOf(c.queries))
    const allow = new Uint32Array(await bytesOf(c.allow))

    const built = new Graph(c.space, c.dim)
    built.init(c.count, c.init.m, c.init.efConstruction, c.init.seed)
    for (let i = 0; i < c.count; i++) built.add(points.subarray(i * c.dim, (i + 1) * c.dim), 3 * i)
    for (const label of c.deleted) built.markDelete(label)
    built.setEf(c.ef)

    const loaded = new Graph(c.space, c.dim)
    loaded.load(new Uint8Array(await bytesOf(c.saved)))
    loaded.setEf(c.ef)

    let saveRefusal = ''
    try {
      loaded.saveSync('graph.bin')
    } catch (error) {
      saveRefusal = error instanceof Error ? error.message : String(error)
    }

    results.push({
      built: { size: built.size(), plain: answers(built, queries, c.dim, c.k), filtered: answers(built, queries, c.dim, c.k, allow) },
      loaded: { size: loaded.size(), plain: answers(loaded, queries, c.dim, c.k), filtered: answers(loaded, queries, c.dim, c.k, allow) },
      saveRefusal,
    })
  }
  return results
}

;(globalThis as { quarryWasmGraph?: RunPage }).quarryWasmGraph = run
