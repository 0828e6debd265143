import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { augmentContents, contextPart, factOf, lastUserTurn } from '../../packages/adapters/src/vertex-rag/augment.js'
import { recording, replaying } from '../../packages/adapters/src/rpc/replay.js'

/**
 * The rest of RAG Engine's surface: augmentPrompt (format and facts against a hand-computed
 * oracle), asyncRetrieveContexts (= retrieveContexts), RagEngineConfig, metadata imported with
 * files, the import result sinks, and the generativeModel hook.
 */
const L = 'projects/p/locations/l'
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function gcsRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'quarry-gcs-'))
  dirs.push(root)
  mkdirSync(join(root, 'b', 'docs'), { recursive: true })
  writeFileSync(join(root, 'b', 'docs', 'dune.txt'), 'The spice must flow on the desert planet Arrakis where sandworms roam.')
  writeFileSync(join(root, 'b', 'docs', 'ocean.txt'), 'The ocean storm broke over the harbor and the ships stayed in port.')
  writeFileSync(join(root, 'b', 'docs', 'garden.txt'), 'Roses and tulips bloom in the quiet garden every spring.')
  return root
}

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success: ${JSON.stringify(outcome.status)}`)
  return outcome.response
}

async function engineWithCorpus(options: ConstructorParameters<typeof VertexRagEngine>[0] = {}): Promise<{ rag: VertexRagEngine; corpus: string; root: string }> {
  const root = gcsRoot()
  const rag = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 64 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(5), gcsRoot: root, ...options })
  const created = ok(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } }))
  const corpus = (created.response as unknown as { name: string }).name
  ok(await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] } } }))
  return { rag, corpus, root }
}

describe('augmentPrompt', () => {
  it('takes the last user turn (role user or unset) with text as the query', () => {
    expect(lastUserTurn([{ role: 'user', parts: [{ text: 'a' }] }, { role: 'model', parts: [{ text: 'b' }] }, { parts: [{ text: 'c' }, { inlineData: {} }, { text: 'd' }] }])).toEqual({ index: 2, text: 'c\nd' })
    expect(lastUserTurn([{ role: 'user', parts: [{ text: 'q' }] }, { role: 'model', parts: [{ text: 'answer' }] }])).toEqual({ index: 0, text: 'q' })
    expect(lastUserTurn([{ role: 'model', parts: [{ text: 'x' }] }, { role: 'user', parts: [{ inlineData: {} }] }])).toBeUndefined()
  })

  it('weaves the contexts into that turn and cites each as a fact (hand-computed oracle)', () => {
    const facts = [
      factOf('q', { sourceUri: 'gs://b/a.txt', sourceDisplayName: 'a.txt', text: 'alpha text', score: 0.25, chunk: { text: 'alpha text' } }),
      factOf('q', { sourceUri: 'notes', sourceDisplayName: 'notes', text: 'beta', score: 0, chunk: { text: 'beta' } }),
    ]
    expect(facts).toEqual([
      { query: 'q', title: 'a.txt', uri: 'gs://b/a.txt', summary: 'alpha text', score: 0.25, chunk: { text: 'alpha text' } },
      { query: 'q', title: 'notes', uri: 'notes', summary: 'beta', score: 0, chunk: { text: 'beta' } },
    ])
    expect(contextPart(facts)).toBe('Context:\n\n[1] a.txt (gs://b/a.txt)\nalpha text\n\n[2] notes\nbeta')
    const contents = [
      { role: 'user', parts: [{ text: 'first' }] },
      { role: 'model', parts: [{ text: 'reply' }] },
      { role: 'user', parts: [{ text: 'q' }] },
    ]
    expect(augmentContents(contents, 2, facts)).toEqual([contents[0], contents[1], { role: 'user', parts: [{ text: contextPart(facts) }, { text: 'q' }] }])
    expect(augmentContents(contents, 2, [])).toEqual(contents)
  })

  it('returns what retrieveContexts retrieves for the query, in order, as facts and in the prompt', async () => {
    const { rag, corpus } = await engineWithCorpus()
    for (const surface of [rag.v1, rag.v1beta1]) {
      const store = { ragResources: [{ ragCorpus: corpus }], ragRetrievalConfig: { topK: 2 } }
      const sync = ok(await surface.retrieveContexts({ parent: L, vertexRagStore: { ragResources: store.ragResources }, query: { text: 'desert spice', ragRetrievalConfig: { topK: 2 } } }))
      const contexts = sync.contexts.contexts ?? []
      expect(contexts.map((c) => c.sourceUri)).toEqual(['gs://b/docs/dune.txt', expect.any(String)])
      const contents = [{ role: 'user', parts: [{ text: 'old question' }] }, { role: 'model', parts: [{ text: 'old answer' }] }, { role: 'user', parts: [{ text: 'desert spice' }] }]
      const out = ok(await surface.augmentPrompt({ parent: L, contents, vertexRagStore: store }))
      const facts = contexts.map((c) => ({ query: 'desert spice', title: c.sourceDisplayName, uri: c.sourceUri, summary: c.text, score: c.score, chunk: c.chunk }))
      expect(out.facts).toEqual(facts)
      expect(out.augmentedPrompt).toEqual([contents[0], contents[1], { role: 'user', parts: [{ text: contextPart(facts) }, { text: 'desert spice' }] }])
      // similarityTopK (deprecated) is the topK when ragRetrievalConfig has none.
      const one = ok(await surface.augmentPrompt({ parent: L, contents, vertexRagStore: { ragResources: store.ragResources, similarityTopK: 1 } }))
      expect(one.facts).toEqual(facts.slice(0, 1))
    }
  })

  it('refuses a request without a store or a user turn, naming the request\'s own fields', async () => {
    const { rag, corpus } = await engineWithCorpus()
    const noStore = await rag.v1beta1.augmentPrompt({ parent: L, contents: [{ role: 'user', parts: [{ text: 'x' }] }] })
    expect(noStore.ok ? undefined : noStore.status.details?.[0]?.fieldViolations[0]?.field).toBe('vertexRagStore')
    const noTurn = await rag.v1beta1.augmentPrompt({ parent: L, contents: [{ role: 'model', parts: [{ text: 'x' }] }], vertexRagStore: { ragResources: [{ ragCorpus: corpus }] } })
    expect(noTurn.ok ? undefined : noTurn.status.details?.[0]?.fieldViolations[0]?.field).toBe('contents')
    const badTopK = await rag.v1beta1.augmentPrompt({ parent: L, contents: [{ role: 'user', parts: [{ text: 'x' }] }], vertexRagStore: { ragResources: [{ ragCorpus: corpus }], ragRetrievalConfig: { topK: -3 } } })
    expect(badTopK.ok ? undefined : badTopK.status.details?.[0]?.fieldViolations[0]?.field).toBe('vertexRagStore.ragRetrievalConfig.topK')
    const missing = await rag.v1beta1.augmentPrompt({ parent: L, contents: [{ role: 'user', parts: [{ text: 'x' }] }], vertexRagStore: { ragResources: [{ ragCorpus: `${L}/ragCorpora/nope` }] } })
    expect(missing.ok ? undefined : missing.status.code).toBe(5)
  })
})

describe('asyncRetrieveContexts', () => {
  it('resolves to exactly what retrieveContexts answers for the same request, read back with getOperation', async () => {
    const { rag, corpus } = await engineWithCorpus()
    for (const surface of [rag.v1, rag.v1beta1]) {
      const query = { text: 'ocean storm harbor', ragRetrievalConfig: { topK: 3 } }
      const sync = ok(await surface.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query }))
      const op = ok(await surface.asyncRetrieveContexts({ parent: L, query, tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] } } }] }))
      expect(op.name).toMatch(/^projects\/p\/locations\/l\/operations\/\d+$/)
      expect(op.done).toBe(true)
      expect(op.response).toEqual({ '@type': `type.googleapis.com/google.cloud.aiplatform.${surface.version}.AsyncRetrieveContextsResponse`, contexts: sync.contexts })
      expect(op.metadata['@type']).toBe(`type.googleapis.com/google.cloud.aiplatform.${surface.version}.AsyncRetrieveContextsOperationMetadata`)
      expect(ok(await surface.getOperation({ name: op.name }))).toEqual(op)
    }
  })

  it('needs exactly one retrieval.vertexRagStore tool', async () => {
    const { rag } = await engineWithCorpus()
    const none = await rag.v1beta1.asyncRetrieveContexts({ parent: L, query: { text: 'x' }, tools: [] })
    expect(none.ok ? undefined : none.status.details?.[0]?.fieldViolations[0]?.field).toBe('tools')
    const search = await rag.v1beta1.asyncRetrieveContexts({ parent: L, query: { text: 'x' }, tools: [{ googleSearch: {} }] })
    expect(search.ok ? undefined : [search.status.code, search.status.details?.[0]?.fieldViolations[0]?.field]).toEqual([9, 'tools[0].googleSearch'])
  })

  it('replays from its recording with the same operation, whatever the reranker says later', async () => {
    let order = 0
    const { rag, corpus } = await engineWithCorpus({ reranker: async ({ contexts }) => (order++ === 0 ? [...contexts].reverse() : contexts) })
    const request = { parent: L, query: { text: 'spice ocean roses', ragRetrievalConfig: { topK: 3, ranking: { rankService: {} } } }, tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] } } }] }
    const first = await recording(() => rag.v1beta1.asyncRetrieveContexts(request))
    expect(first.trace.map((t) => (t as [string])[0])).toEqual(['embed', 'rerank', 'id', 'clock'])
    const again = await replaying(first.trace, () => rag.v1beta1.asyncRetrieveContexts(request))
    expect(again).toEqual(first.result)
  })
})

describe('RagEngineConfig', () => {
  it('defaults to the Basic tier and round-trips updates as long-running operations', async () => {
    const { rag, corpus } = await engineWithCorpus()
    const name = `${L}/ragEngineConfig`
    // https://cloud.google.com/vertex-ai/generative-ai/docs/rag-engine/understanding-ragmanageddb: "Basic tier (default)".
    expect(ok(await rag.v1.getRagEngineConfig({ name }))).toEqual({ name, ragManagedDbConfig: { basic: {} } })
    const op = ok(await rag.v1beta1.updateRagEngineConfig({ ragEngineConfig: { name, ragManagedDbConfig: { spanner: { scaled: {} } } } }))
    expect(op.response).toEqual({ '@type': 'type.googleapis.com/google.cloud.aiplatform.v1beta1.RagEngineConfig', name, ragManagedDbConfig: { spanner: { scaled: {} } } })
    expect(ok(await rag.v1beta1.getRagEngineConfig({ name }))).toEqual({ name, ragManagedDbConfig: { spanner: { scaled: {} } } })
    expect(ok(await rag.v1.getRagEngineConfig({ name }))).toEqual({ name, ragManagedDbConfig: { scaled: {} } })
    // v1 sets the tier and keeps the Spanner mode v1beta1 chose.
    ok(await rag.v1.updateRagEngineConfig({ ragEngineConfig: { name, ragManagedDbConfig: { basic: {} } } }))
    expect(ok(await rag.v1beta1.getRagEngineConfig({ name }))).toEqual({ name, ragManagedDbConfig: { spanner: { basic: {} } } })
    // Another location keeps the default.
    expect(ok(await rag.v1.getRagEngineConfig({ name: 'projects/p/locations/other/ragEngineConfig' }))).toEqual({ name: 'projects/p/locations/other/ragEngineConfig', ragManagedDbConfig: { basic: {} } })
    // Unprovisioned deletes the location's corpora and refuses new ones until a tier is set.
    ok(await rag.v1.updateRagEngineConfig({ ragEngineConfig: { name, ragManagedDbConfig: { unprovisioned: {} } } }))
    expect((await rag.v1.getRagCorpus({ name: corpus })).ok).toBe(false)
    const refused = await rag.v1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'again' } })
    expect(refused.ok ? undefined : refused.status.code).toBe(9)
    ok(await rag.v1.updateRagEngineConfig({ ragEngineConfig: { name, ragManagedDbConfig: { basic: {} } } }))
    expect((await rag.v1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'again' } })).ok).toBe(true)
    const empty = await rag.v1.updateRagEngineConfig({ ragEngineConfig: { name, ragManagedDbConfig: {} } })
    expect(empty.ok ? undefined : empty.status.details?.[0]?.fieldViolations[0]?.field).toBe('ragEngineConfig.ragManagedDbConfig')
    const badName = await rag.v1.getRagEngineConfig({ name: `${L}/ragEngineConfigs/x` })
    expect(badName.ok ? undefined : badName.status.code).toBe(3)
  })

  it('is kept by saveTo / loadFrom', async () => {
    const { rag } = await engineWithCorpus()
    const name = `${L}/ragEngineConfig`
    ok(await rag.v1beta1.updateRagEngineConfig({ ragEngineConfig: { name, ragManagedDbConfig: { serverless: {} } } }))
    const dir = mkdtempSync(join(tmpdir(), 'quarry-rag-config-'))
    dirs.push(dir)
    rag.saveTo(dir)
    const other = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 64 }) })
    other.loadFrom(dir)
    expect(ok(await other.v1beta1.getRagEngineConfig({ name }))).toEqual({ name, ragManagedDbConfig: { serverless: {} } })
  })
})

describe('importRagFiles: ragFileMetadataConfig and result sinks', () => {
  const schemas = JSON.stringify([{ key: 'year', schemaDetails: { type: 'INTEGER' } }, { key: 'genre', schemaDetails: { type: 'STRING' } }])
  const values = JSON.stringify([
    { uri: 'gs://b/docs/dune.txt', metadata: { year: { intValue: '1965' }, genre: { strValue: 'scifi' } } },
    { uri: 'gs://b/docs/ocean.txt', metadata: { year: { intValue: '2001' } } },
  ])

  async function metadataOf(rag: VertexRagEngine, corpus: string): Promise<Record<string, Record<string, unknown>>> {
    const files = ok(await rag.v1beta1.listRagFiles({ parent: corpus })).ragFiles ?? []
    const out: Record<string, Record<string, unknown>> = {}
    for (const f of files) {
      const list = ok(await rag.v1beta1.listRagMetadata({ parent: f.name })).ragMetadata ?? []
      out[f.displayName] = Object.fromEntries(list.map((m) => [m.userSpecifiedMetadata.key, m.userSpecifiedMetadata.value]))
    }
    return out
  }

  const expected = { 'dune.txt': { year: { intValue: '1965' }, genre: { strValue: 'scifi' } }, 'garden.txt': {}, 'ocean.txt': { year: { intValue: '2001' } } }

  it('applies inline schemas and values to the imported files, and filters by them', async () => {
    const root = gcsRoot()
    const rag = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 64 }), randomId: seededRandomId(9), gcsRoot: root })
    const corpus = (ok(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response as unknown as { name: string }).name
    const op = ok(await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileMetadataConfig: { inlineMetadataSchemaSource: schemas, inlineMetadataSource: values } } }))
    expect(op.response).toMatchObject({ importedRagFilesCount: '3' })
    expect((ok(await rag.v1beta1.listRagDataSchemas({ parent: corpus })).ragDataSchemas ?? []).map((s) => [s.key, s.schemaDetails])).toEqual([['year', { type: 'INTEGER' }], ['genre', { type: 'STRING' }]])
    expect(await metadataOf(rag, corpus)).toEqual(expected)
    const hits = ok(await rag.v1beta1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'the', ragRetrievalConfig: { filter: { metadataFilter: 'year > 2000' } } } }))
    expect((hits.contexts.contexts ?? []).map((c) => c.sourceUri)).toEqual(['gs://b/docs/ocean.txt'])
    // A re-import updates values of keys the files have.
    ok(await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs/ocean.txt'] }, ragFileMetadataConfig: { inlineMetadataSource: JSON.stringify([{ uri: 'gs://b/docs/ocean.txt', metadata: { year: { intValue: '1999' } } }]) } } }))
    expect((await metadataOf(rag, corpus))['ocean.txt']).toEqual({ year: { intValue: '1999' } })
  })

  it('reads schemas and values from gs:// files and folders, and does not import them as documents', async () => {
    const root = gcsRoot()
    mkdirSync(join(root, 'b', 'meta'))
    writeFileSync(join(root, 'b', 'meta', 'metadata_schema.json'), schemas)
    writeFileSync(join(root, 'b', 'docs', 'metadata.json'), values)
    const rag = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 64 }), randomId: seededRandomId(9), gcsRoot: root })
    const corpus = (ok(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response as unknown as { name: string }).name
    const op = ok(await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileMetadataConfig: { gcsMetadataSchemaSource: { uris: ['gs://b/meta'] }, gcsMetadataSource: { uris: ['gs://b/docs/metadata.json'] } } } }))
    expect(op.response).toMatchObject({ importedRagFilesCount: '3' })
    expect(await metadataOf(rag, corpus)).toEqual(expected)
  })

  it('refuses bad metadata before writing anything', async () => {
    const { rag, corpus } = await engineWithCorpus()
    const cases: [unknown, number, string][] = [
      [{ inlineMetadataSource: '{not json' }, 3, 'importRagFilesConfig.ragFileMetadataConfig.inlineMetadataSource'],
      [{ inlineMetadataSource: JSON.stringify([{ uri: 'gs://b/elsewhere.txt', metadata: { year: { intValue: '1' } } }]) }, 3, 'importRagFilesConfig.ragFileMetadataConfig'],
      [{ inlineMetadataSchemaSource: schemas, inlineMetadataSource: JSON.stringify([{ uri: 'gs://b/docs/dune.txt', metadata: { year: { strValue: 'old' } } }]) }, 3, 'importRagFilesConfig.ragFileMetadataConfig.inlineMetadataSource'],
      [{ gcsMetadataSource: { uris: ['gs://b/none.json'] } }, 3, 'importRagFilesConfig.ragFileMetadataConfig.gcsMetadataSource'],
    ]
    for (const [ragFileMetadataConfig, code, field] of cases) {
      const out = await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileMetadataConfig } })
      expect(out.ok ? undefined : [out.status.code, out.status.details?.[0]?.fieldViolations[0]?.field], JSON.stringify(ragFileMetadataConfig)).toEqual([code, field])
    }
    expect(ok(await rag.v1beta1.listRagDataSchemas({ parent: corpus })).ragDataSchemas).toBeUndefined()
    const v1 = await rag.v1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileMetadataConfig: { inlineMetadataSource: values } } })
    expect(v1.ok).toBe(false)
  })

  it('writes every file\'s result, and the failures, as JSON lines under gcsRoot', async () => {
    const { rag, corpus, root } = await engineWithCorpus()
    writeFileSync(join(root, 'b', 'docs', 'empty.txt'), '   ')
    const op = ok(
      await rag.v1.importRagFiles({
        parent: corpus,
        importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs', 'gs://b/missing.txt'] }, importResultGcsSink: { outputUriPrefix: 'gs://b/out' }, partialFailureGcsSink: { outputUriPrefix: 'gs://b/out/failures/' } },
      }),
    )
    const id = op.name.split('/').pop() as string
    const files = ok(await rag.v1.listRagFiles({ parent: corpus })).ragFiles ?? []
    const nameOf = (display: string): string => files.find((f) => f.displayName === display)?.name as string
    const lines = (path: string): unknown[] => readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as unknown)
    const missing = { uri: 'gs://b/missing.txt', result: 'FAILED', error: { code: 5, message: 'gs://b/missing.txt: no such file or folder.' } }
    const empty = { uri: 'gs://b/docs/empty.txt', result: 'FAILED', error: { code: 3, message: 'gs://b/docs/empty.txt: the file has no text.' } }
    expect(lines(join(root, 'b', 'out', `import_result_${id}.jsonl`))).toEqual([
      missing,
      { uri: 'gs://b/docs/dune.txt', ragFile: nameOf('dune.txt'), result: 'SKIPPED' },
      empty,
      { uri: 'gs://b/docs/garden.txt', ragFile: nameOf('garden.txt'), result: 'SKIPPED' },
      { uri: 'gs://b/docs/ocean.txt', ragFile: nameOf('ocean.txt'), result: 'SKIPPED' },
    ])
    expect(lines(join(root, 'b', 'out', 'failures', `partial_failures_${id}.jsonl`))).toEqual([missing, empty])
    expect(op.response).toEqual({
      '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.ImportRagFilesResponse',
      partialFailuresGcsPath: `gs://b/out/failures/partial_failures_${id}.jsonl`,
      failedRagFilesCount: '2',
      skippedRagFilesCount: '3',
    })
  })

  it('refuses sinks outside the Cloud Storage folder, and does not write through a link out of it', async () => {
    const { rag, corpus, root } = await engineWithCorpus()
    for (const prefix of ['gs://b/../../escape', 'file:///tmp/x', '']) {
      const out = await rag.v1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, importResultGcsSink: { outputUriPrefix: prefix } } })
      expect(out.ok ? undefined : [out.status.code, out.status.details?.[0]?.fieldViolations[0]?.field]).toEqual([3, 'importRagFilesConfig.importResultGcsSink.outputUriPrefix'])
    }
    const outside = mkdtempSync(join(tmpdir(), 'quarry-outside-'))
    dirs.push(outside)
    symlinkSync(outside, join(root, 'b', 'link'))
    const op = ok(await rag.v1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, importResultGcsSink: { outputUriPrefix: 'gs://b/link/deeper' } } }))
    expect(readdirSync(outside)).toEqual([])
    expect(JSON.stringify(op.metadata)).toContain('link out of the Cloud Storage folder')
  })

  it('replays an import from its recording without reading the metadata or writing the sink again', async () => {
    const { rag, corpus, root } = await engineWithCorpus()
    const metadataFile = join(root, 'b', 'docs', 'metadata.json')
    const request = { parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileMetadataConfig: { inlineMetadataSchemaSource: schemas, gcsMetadataSource: { uris: ['gs://b/docs'] } }, importResultGcsSink: { outputUriPrefix: 'gs://b/out' } } }
    const twin = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 64 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(5), gcsRoot: root })
    ok(await twin.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } }))
    ok(await twin.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] } } }))
    writeFileSync(metadataFile, values)
    const first = await recording(() => rag.v1beta1.importRagFiles(request))
    const sink = join(root, 'b', 'out')
    const written = readdirSync(sink)
    rmSync(sink, { recursive: true })
    writeFileSync(metadataFile, '[]')
    const again = await replaying(first.trace, () => twin.v1beta1.importRagFiles(request))
    expect(again).toEqual(first.result)
    expect(await metadataOf(twin, corpus)).toEqual(await metadataOf(rag, corpus))
    expect(written).toHaveLength(1)
    expect(() => readdirSync(sink)).toThrow()
  })
})

describe('askContexts and corroborateContent', () => {
  it('answer UNIMPLEMENTED without a model, saying how to supply one', async () => {
    const { rag, corpus } = await engineWithCorpus()
    const ask = await rag.v1beta1.askContexts({ parent: L, query: { text: 'x' }, tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] } } }] })
    expect(ask.ok ? undefined : [ask.status.code, ask.status.message]).toEqual([12, expect.stringContaining('is not implemented by Quarry without a generative model to answer from the retrieved contexts: pass the engine option generativeModel: { generate:')])
    const corroborate = await rag.v1.corroborateContent({ parent: L, content: { parts: [{ text: 'x' }] } })
    expect(corroborate.ok ? undefined : [corroborate.status.code, corroborate.status.message]).toEqual([12, expect.stringContaining('generativeModel: { corroborate:')])
  })

  it('serve them through the generativeModel hook, recorded for replay', async () => {
    const seen: unknown[] = []
    const { rag, corpus } = await engineWithCorpus({
      generativeModel: {
        generate: async ({ prompt, contexts }) => {
          seen.push(prompt)
          return `${prompt} → ${contexts.map((c) => c.sourceDisplayName).join(', ')}`
        },
        corroborate: async ({ text, facts }) => ({
          corroborationScore: 0.5,
          claims: [
            { startIndex: 0, endIndex: 5, factIndexes: [0], score: 0.9 },
            { startIndex: 6, endIndex: text.length, factIndexes: facts.length > 1 ? [1] : [], score: 0.2 },
          ],
        }),
      },
    })
    const query = { text: 'desert spice', ragRetrievalConfig: { topK: 2 } }
    const sync = ok(await rag.v1beta1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query }))
    const ask = ok(await rag.v1beta1.askContexts({ parent: L, query, tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] } } }] }))
    expect(ask).toEqual({ response: `desert spice → ${(sync.contexts.contexts ?? []).map((c) => c.sourceDisplayName).join(', ')}`, contexts: sync.contexts })
    const facts = [{ summary: 'spice' }, { summary: 'worms' }]
    const all = ok(await rag.v1.corroborateContent({ parent: L, content: { parts: [{ text: 'Spice flows on Arrakis' }] }, facts }))
    expect(all).toEqual({ corroborationScore: 0.5, claims: [{ startIndex: 0, endIndex: 5, factIndexes: [0], score: 0.9 }, { startIndex: 6, endIndex: 22, factIndexes: [1], score: 0.2 }] })
    const strict = ok(await rag.v1.corroborateContent({ parent: L, content: { parts: [{ text: 'Spice flows on Arrakis' }] }, facts, parameters: { citationThreshold: 0.5 } }))
    expect(strict.claims).toEqual([{ startIndex: 0, endIndex: 5, factIndexes: [0], score: 0.9 }])
    const recorded = await recording(() => rag.v1beta1.askContexts({ parent: L, query, tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] } } }] }))
    expect(recorded.trace.map((t) => (t as [string])[0])).toEqual(['embed', 'generate'])
    seen.length = 0
    expect(await replaying(recorded.trace, () => rag.v1beta1.askContexts({ parent: L, query, tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] } } }] }))).toEqual(recorded.result)
    expect(seen).toEqual([])
  })

  it('turns a hook\'s impossible claim into INTERNAL', async () => {
    const errors: unknown[] = []
    const { rag } = await engineWithCorpus({ onInternalError: (e) => errors.push(e), generativeModel: { corroborate: async () => ({ claims: [{ startIndex: 0, endIndex: 99, factIndexes: [3] }] }) } })
    const out = await rag.v1.corroborateContent({ parent: L, content: { parts: [{ text: 'short' }] }, facts: [{ summary: 'x' }] })
    expect(out.ok ? undefined : out.status.code).toBe(13)
    expect(String(errors[0])).toContain('not a span')
  })
})
