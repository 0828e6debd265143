import type { Embedder } from '@quarry/core'
import { seededRandomId } from '../rpc/names.js'
import { v1beta1 } from '../namespaces.js'
import { VertexRagEngine } from '../vertex-rag/service.js'
import type { RetrieveContextsResponseJson } from '../vertex-rag/resources.js'
import { packageDocs } from './package-docs.js'
import { progress } from './progress.js'
import { betterScore, type DistanceMetric } from '../vertex-rag/metric.js'
import { renderTable, scoreHeader } from './table.js'

const PARENT = 'projects/demo/locations/us-central1'
/** The corpus's metric (RAG Engine's default): its scores are distances, lower is better. */
const METRIC: DistanceMetric = 'COSINE_DISTANCE'

/**
 * The package docs through Vertex AI RAG Engine (v1beta1), in process: a RagCorpus, every doc
 * uploaded as a RagFile (fixed-length chunking, 200 tokens, 40 overlap), then retrieveContexts
 * as dense only, BM25 only and hybrid.
 */
export async function runVertexRagDemo(embedder: Embedder, question: string): Promise<void> {
  const engine = new VertexRagEngine({ embedder, randomId: seededRandomId(1), distanceMetric: METRIC })
  const data = new v1beta1.VertexRagDataServiceClient({ engine })
  const rag = new v1beta1.VertexRagServiceClient({ engine })
  const [operation] = await data.createRagCorpus({ parent: PARENT, ragCorpus: { displayName: 'npm package docs', vectorDbConfig: { ragManagedDb: { ann: {} } } } })
  const [corpus] = await operation.promise()
  const docs = packageDocs()
  const bar = progress(`Vertex RAG: uploadRagFile into ${corpus.name.split('/').slice(-2).join('/')}`, docs.length, 'files')
  for (const [i, doc] of docs.entries()) {
    await data.uploadRagFile(
      { parent: corpus.name, ragFile: { displayName: doc.source }, uploadRagFileConfig: { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 200, chunkOverlap: 40 } } } } },
      doc.text,
    )
    if (i % 20 === 0) bar.tick(i + 1)
  }
  bar.done(`${docs.length} RagFiles`)
  for (const alpha of [1, 0, 0.5]) {
    const [response] = await rag.retrieveContexts({
      parent: PARENT,
      vertexRagStore: { ragResources: [{ ragCorpus: corpus.name }] },
      query: { text: question, ragRetrievalConfig: { topK: 5, hybridSearch: { alpha } } },
    })
    const mode = alpha === 1 ? 'dense only' : alpha === 0 ? 'BM25 only' : 'hybrid'
    printContexts(`retrieveContexts {"text": "${question}", "topK": 5, "hybridSearch": {"alpha": ${alpha}}} (${mode})`, response)
  }
}

function printContexts(title: string, response: RetrieveContextsResponseJson): void {
  console.log(`\n${title}`)
  const rows = (response.contexts.contexts ?? []).map((c, i) => [i + 1, c.score, c.distance ?? '', c.sparseDistance ?? '', c.sourceDisplayName.slice(0, 40), c.text.replace(/\s+/g, ' ').slice(0, 48)])
  console.log(
    renderTable(['rank', scoreHeader('score', betterScore(METRIC)), scoreHeader('distance', 'lower'), scoreHeader('sparseDistance', 'lower'), 'source', 'text'], rows)
      .split('\n')
      .map((line) => `  ${line}`)
      .join('\n'),
  )
}
