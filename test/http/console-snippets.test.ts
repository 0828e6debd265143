import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'
import { APP_PACKAGES, importedPackages, runNodeSnippet } from '../browser/node-snippet.js'

/**
 * The console's "Node client" snippets (console/playground.js), run as a person would paste them
 * into an app that installed only Google's client package of the API: a folder whose node_modules
 * holds that package alone (test/browser/node-snippet.ts). Each must import nothing else, run
 * against a live server, and print what the REST call answers, in the same order.
 */
interface Kind {
  node(target: string, body: string): string
}

const LOCATION = 'projects/p1/locations/us-central1'
const ENGINE = `${LOCATION}/reasoningEngines/1`
let server: QuarryServer
let url = ''
let kinds: Record<'semanticRetriever' | 'vertexRag' | 'memoryBank', Kind>
let ragCorpus = ''

async function rest(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const json = await response.json()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

beforeAll(async () => {
  server = createServer({ embedder: createHashingEmbedder({ dimensions: 64 }), console: false })
  ;({ url } = await server.listen())
  // The snippets name the page's origin, as the console shows them.
  ;(globalThis as { location?: unknown }).location = new URL(url)
  kinds = ((await import('../../packages/adapters/console/playground.js' as string)) as { KINDS: typeof kinds }).KINDS
  await rest('POST', '/v1beta/corpora', { name: 'corpora/books' })
  await rest('POST', '/v1beta/corpora/books/documents', { name: 'corpora/books/documents/dune' })
  for (const [id, text] of [['spice', 'The spice must flow across the desert planet.'], ['fear', 'Fear is the mind-killer.'], ['sand', 'Sand worms rise from the desert when the spice harvest begins.']] as const) {
    await rest('POST', '/v1beta/corpora/books/documents/dune/chunks', { name: `corpora/books/documents/dune/chunks/${id}`, data: { stringValue: text } })
  }
  const op = await rest('POST', `/v1beta1/${LOCATION}/ragCorpora`, { displayName: 'Manuals' })
  ragCorpus = op.response.name
  for (const [name, text] of [['kettle.md', 'To reset the kettle, hold its button for five seconds.'], ['lamp.md', 'The lamp dims when you turn its ring.']] as const) {
    const form = new FormData()
    form.append('metadata', new Blob([JSON.stringify({ ragFile: { displayName: name } })], { type: 'application/json' }))
    form.append('file', new Blob([text], { type: 'text/markdown' }), name)
    expect((await fetch(`${url}/upload/v1beta1/${ragCorpus}/ragFiles:upload`, { method: 'POST', body: form })).status).toBe(200)
  }
  for (const fact of ['I like green tea.', 'I drink my tea without sugar.']) await rest('POST', `/v1beta1/${ENGINE}/memories`, { fact, scope: { user_id: 'u1' } })
}, 60_000)

afterAll(async () => {
  delete (globalThis as { location?: unknown }).location
  await server?.close()
})

/** Runs a snippet; its stdout, after checking it ran cleanly and imported only what the app installs. */
async function run(code: string, expectedImport: string): Promise<string> {
  expect(importedPackages(code)).toEqual([expectedImport])
  expect(APP_PACKAGES).toContain(expectedImport)
  const node = await runNodeSnippet(code)
  expect(node.stderr.replace(/^.*ExperimentalWarning.*$|^\(Use `node --trace-warnings.*$/gm, '').trim()).toBe('')
  expect(node.exitCode).toBe(0)
  return node.stdout
}

describe("the console's Node snippets", () => {
  it('Semantic Retriever: @google-ai/generativelanguage alone, the chunks REST answers in its order', async () => {
    const request = { query: 'spice desert', resultsCount: 3 }
    const out = await run(kinds.semanticRetriever.node('corpora/books', JSON.stringify(request, null, 2)), '@google-ai/generativelanguage')
    const expected = await rest('POST', '/v1beta/corpora/books:query', request)
    const named = [...out.matchAll(/name: '(corpora\/books\/documents\/dune\/chunks\/[^']+)'/g)].map((m) => m[1])
    expect(named).toEqual(expected.relevantChunks.map((r: any) => r.chunk.name))
    expect(named.length).toBe(3)
  }, 60_000)

  it('RAG Engine: @google-cloud/aiplatform alone, the contexts REST answers in its order', async () => {
    const request = { vertexRagStore: { ragResources: [{ ragCorpus }] }, query: { text: 'reset the kettle' } }
    const out = await run(kinds.vertexRag.node(LOCATION, JSON.stringify(request, null, 2)), '@google-cloud/aiplatform')
    const expected = await rest('POST', `/v1beta1/${LOCATION}:retrieveContexts`, request)
    const sources = [...out.matchAll(/sourceDisplayName: '([^']+)'/g)].map((m) => m[1])
    expect(sources).toEqual(expected.contexts.contexts.map((c: any) => c.sourceDisplayName))
    expect(sources).toEqual(['kettle.md', 'lamp.md'])
  }, 60_000)

  it('Memory Bank: @google-cloud/aiplatform alone, the memories REST answers in its order', async () => {
    const request = { scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'green tea' } }
    const out = await run(kinds.memoryBank.node(ENGINE, JSON.stringify(request, null, 2)), '@google-cloud/aiplatform')
    const expected = await rest('POST', `/v1beta1/${ENGINE}/memories:retrieve`, request)
    const facts = [...out.matchAll(/fact: '([^']+)'/g)].map((m) => m[1])
    expect(facts).toEqual(expected.retrievedMemories.map((r: any) => r.memory.fact))
    expect(facts).toHaveLength(2)
  }, 60_000)
})
