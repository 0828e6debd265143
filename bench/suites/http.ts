import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent, request } from 'node:http'
import { createGloveEmbedder } from '@quarry/core'
import { createServer, type Outcome } from '@quarry/adapters'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

/**
 * The HTTP layer's cost: retrieveContexts, queryCorpus and retrieveMemories over loopback HTTP
 * (keep-alive, JSON) against the same calls in process on the same engines, with 1, 8 and 32
 * concurrent clients (a closed loop: each client sends its next request when the last returns).
 * Requests per second, p50 / p99 latency and the HTTP / in-process ratio.
 */
export async function runHttp(ctx: SuiteContext): Promise<void> {
  const embedder = createGloveEmbedder()
  const server = createServer({ embedder, onInternalError: (e) => console.error(e) })
  const { url } = await server.listen()
  const { semanticRetriever: sr, vertexRag, memoryBank } = server.engines
  const passages = npmCorpus().slice(0, ctx.quick ? 2000 : 10_000)

  await sr.createCorpus({ corpus: { name: 'corpora/bench' } })
  await sr.createDocument({ parent: 'corpora/bench', document: { name: 'corpora/bench/documents/d' } })
  for (let i = 0; i < passages.length; i += 100) {
    await sr.batchCreateChunks({ parent: 'corpora/bench/documents/d', requests: passages.slice(i, i + 100).map((p) => ({ chunk: { data: { stringValue: p.text.slice(0, 2000) } } })) })
  }
  const created = await vertexRag.v1beta1.createRagCorpus({ parent: 'projects/b/locations/l', ragCorpus: { displayName: 'bench', vectorDbConfig: { ragManagedDb: { ann: {} } } } })
  if (!created.ok) throw new Error(created.status.message)
  const ragCorpus = created.response.response?.name as string
  for (let i = 0; i < passages.length; i += 50) {
    await vertexRag.v1beta1.uploadRagFile({ parent: ragCorpus, ragFile: { displayName: `f${i}.txt` }, uploadRagFileConfig: { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 128, chunkOverlap: 16 } } } } }, passages.slice(i, i + 50).map((p) => p.text).join('\n\n'))
  }
  const engine = 'projects/b/locations/l/reasoningEngines/1'
  for (let i = 0; i < Math.min(passages.length, 5000); i += 5) {
    await memoryBank.generateMemories({ parent: engine, scope: { user_id: `u${(i / 5) % 50}` }, disableConsolidation: true, directMemoriesSource: { directMemories: passages.slice(i, i + 5).map((p) => ({ fact: p.text.slice(0, 300) })) } })
  }
  const queries = makeQueries(passages, 50).map((q) => q.text)

  type Call = { path: string; body: (q: string, i: number) => Record<string, unknown>; local: (body: Record<string, unknown>) => Promise<Outcome<unknown>> }
  const calls: Record<string, Call> = {
    retrieveContexts: {
      path: '/v1beta1/projects/b/locations/l:retrieveContexts',
      body: (q) => ({ vertexRagStore: { ragResources: [{ ragCorpus }] }, query: { text: q, ragRetrievalConfig: { topK: 10 } } }),
      local: (b) => vertexRag.v1beta1.retrieveContexts({ parent: 'projects/b/locations/l', ...b }),
    },
    queryCorpus: { path: '/v1beta/corpora/bench:query', body: (q) => ({ query: q, resultsCount: 10 }), local: (b) => sr.queryCorpus({ name: 'corpora/bench', ...b }) },
    retrieveMemories: {
      path: `/v1beta1/${engine}/memories:retrieve`,
      body: (q, i) => ({ scope: { user_id: `u${i % 50}` }, similaritySearchParams: { searchQuery: q, topK: 5 } }),
      local: (b) => memoryBank.retrieveMemories({ parent: engine, ...b }),
    },
  }
  // A keep-alive agent, as Google's clients keep connections open.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const { port } = new URL(url)
  const post = (path: string, body: string): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
      })
      req.on('error', reject)
      req.end(body)
    })
  const perClient = ctx.quick ? 20 : 150
  const rows: Record<string, string | number>[] = []
  for (const [name, c] of Object.entries(calls)) {
    for (const concurrency of [1, 8, 32]) {
      const measure = async (mode: 'http' | 'in-process'): Promise<{ rps: number; p50: number; p99: number }> => {
        const latencies: number[] = []
        const t0 = performance.now()
        await Promise.all(
          Array.from({ length: concurrency }, async (_, w) => {
            for (let k = 0; k < perClient; k++) {
              const i = (w * perClient + k) % queries.length
              const body = c.body(queries[i] as string, i)
              const t = performance.now()
              if (mode === 'http') {
                const res = await post(c.path, JSON.stringify(body))
                JSON.parse(res.text)
                if (res.status !== 200) throw new Error(res.text)
              } else {
                const out = await c.local(body)
                if (!out.ok) throw new Error(out.status.message)
                JSON.stringify(out.response)
              }
              latencies.push(performance.now() - t)
            }
          }),
        )
        const seconds = (performance.now() - t0) / 1000
        return { rps: latencies.length / seconds, p50: median(latencies), p99: percentile(latencies, 0.99) }
      }
      await measure('http')
      await measure('in-process')
      const a = await measure('in-process')
      const b = await measure('http')
      rows.push({ call: name, clients: concurrency, 'in-process rps': a.rps, 'http rps': b.rps, 'rps ratio': b.rps / a.rps, 'in-process p50 ms': a.p50, 'http p50 ms': b.p50, 'in-process p99 ms': a.p99, 'http p99 ms': b.p99, 'p50 ratio': b.p50 / a.p50 })
    }
  }
  agent.destroy()
  await server.close()
  printTable(`HTTP (loopback, keep-alive) vs in process, ${perClient} requests per client, ${passages.length} passages`, rows)
  writeFileSync(join(ctx.resultsDir, 'http.json'), `${JSON.stringify({ suite: 'http', date: new Date().toISOString(), node: process.version, quick: ctx.quick, passages: passages.length, perClient, rows }, null, 1)}\n`)
}
