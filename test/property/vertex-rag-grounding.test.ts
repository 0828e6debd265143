import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { retrieveContextsRequestArbitrary } from '@quarry/adapters/testing'
import { contextPart } from '../../packages/adapters/src/vertex-rag/augment.js'
import { runs } from '../support/runs.js'

/**
 * For every valid retrieveContexts request (the adapters' own arbitrary): asyncRetrieveContexts
 * with the same query and the same store as its one retrieval tool resolves to exactly the
 * synchronous answer, and augmentPrompt over the same store and query text cites exactly those
 * contexts, in order, and weaves them into the prompt.
 */
const GCS = fileURLToPath(new URL('../contract/fixtures/gcs', import.meta.url))
const L = 'projects/p/locations/l'
const rag = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(3), gcsRoot: GCS })
let corpus = ''
let fileIds: string[] = []

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.status))
  return outcome.response
}

beforeAll(async () => {
  corpus = (ok(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response as unknown as { name: string }).name
  ok(
    await rag.v1beta1.importRagFiles({
      parent: corpus,
      importRagFilesConfig: {
        gcsSource: { uris: ['gs://library/dune.txt', 'gs://library/emma.md', 'gs://library/ocean.html', 'gs://library/nested'] },
        ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 12, chunkOverlap: 3 } } },
        ragFileMetadataConfig: {
          inlineMetadataSchemaSource: JSON.stringify([{ key: 'year', schemaDetails: { type: 'INTEGER' } }, { key: 'genre', schemaDetails: { type: 'STRING' } }]),
          inlineMetadataSource: JSON.stringify([
            { uri: 'gs://library/dune.txt', metadata: { year: { intValue: '1965' }, genre: { strValue: 'scifi' } } },
            { uri: 'gs://library/emma.md', metadata: { year: { intValue: '1815' }, genre: { strValue: 'novel' } } },
            { uri: 'gs://library/ocean.html', metadata: { year: { intValue: '2001' } } },
          ]),
        },
      },
    }),
  )
  fileIds = (ok(await rag.v1beta1.listRagFiles({ parent: corpus })).ragFiles ?? []).map((f) => f.name.split('/').pop() as string)
})

describe('asyncRetrieveContexts and augmentPrompt agree with retrieveContexts', () => {
  it('for every valid request', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constant(null).chain(() => retrieveContextsRequestArbitrary({ ragCorpus: corpus, ragFileIds: fileIds, metadataSchema: { year: 'INTEGER', genre: 'STRING' } })),
        async (request) => {
          const { vertexRagStore = {}, query = {} } = request
          const sync = ok(await rag.v1beta1.retrieveContexts(request))
          const op = ok(await rag.v1beta1.asyncRetrieveContexts({ parent: L, query, tools: [{ retrieval: { vertexRagStore } }] }))
          expect((op.response as unknown as { contexts: unknown }).contexts).toEqual(sync.contexts)

          // The store carries what the query's retrieval config says; the deprecated query.ranking.alpha has no store field.
          const { ranking: _alpha, similarityTopK, ragRetrievalConfig, text = '' } = query
          const plain = ok(await rag.v1beta1.retrieveContexts({ ...request, query: { text, ...(similarityTopK === undefined ? {} : { similarityTopK }), ...(ragRetrievalConfig === undefined ? {} : { ragRetrievalConfig }) } }))
          const store = { ...vertexRagStore, ...(similarityTopK === undefined ? {} : { similarityTopK }), ...(ragRetrievalConfig === undefined ? {} : { ragRetrievalConfig }) }
          const contents = [{ role: 'user', parts: [{ text }] }]
          const augmented = ok(await rag.v1beta1.augmentPrompt({ parent: L, contents, vertexRagStore: store }))
          const contexts = plain.contexts.contexts ?? []
          const facts = contexts.map((c) => ({ query: text, title: c.sourceDisplayName, uri: c.sourceUri, summary: c.text, score: c.score, chunk: c.chunk }))
          expect(augmented.facts ?? []).toEqual(facts)
          expect(augmented.augmentedPrompt).toEqual(facts.length === 0 ? contents : [{ role: 'user', parts: [{ text: contextPart(facts) }, { text }] }])
        },
      ),
      { numRuns: runs(80) },
    )
  })
})
