import { join } from 'node:path'
import { Analyzer, chunkText, createGloveEmbedder, createIndex, defaultCacheDir, loadIndex, type Embedder, type QuarryIndex, type SearchResult } from '@quarry/core'
import { packageDocs } from './package-docs.js'
import { runSemanticRetrieverDemo } from './demo-semantic-retriever.js'
import { runVertexRagDemo } from './demo-vertex-rag.js'
import { runMemoryBankDemo } from './demo-memory-bank.js'
import { progress } from './progress.js'
import { renderTable } from './table.js'

/** Where the demo keeps its index between runs. */
export function demoIndexDir(): string {
  return join(defaultCacheDir(), 'demo-index')
}

/** The default embedder, with a progress bar for its one-time cache conversion. */
export function demoEmbedder(): Embedder {
  let bar: ReturnType<typeof progress> | undefined
  const embedder = createGloveEmbedder({
    onProgress: (e) => {
      bar ??= progress('Converting GloVe JSON to a binary cache (first run only)', 3, 'steps')
      bar.tick(e.phase === 'parse' ? e.done : e.phase === 'convert' ? 2 : 3)
    },
  })
  bar?.done()
  return embedder
}

/** Chunks, embeds and indexes the markdown docs of the installed npm packages; saves the index. */
export async function buildDemoIndex(embedder: Embedder): Promise<QuarryIndex> {
  const docs = packageDocs()
  const analyzer = new Analyzer()
  const chunks: { id: string; text: string; metadata: { source: string; start: number } }[] = []
  const bar = progress('Chunking package docs (200 tokens, 40 overlap)', docs.length, 'files')
  docs.forEach((doc, i) => {
    for (const c of chunkText(analyzer, doc.text, { size: 200, overlap: 40 })) {
      chunks.push({ id: `${doc.source}#${c.start}`, text: c.text, metadata: { source: doc.source, start: c.start } })
    }
    if (i % 20 === 0) bar.tick(i)
  })
  bar.done(`${chunks.length} chunks`)
  const index = createIndex({ embedder, metric: 'cosine' })
  const embedBar = progress('Embedding and indexing chunks (GloVe SIF + BM25 + HNSW)', chunks.length, 'chunks')
  for (let start = 0; start < chunks.length; start += 500) {
    await index.ingest(chunks.slice(start, start + 500))
    embedBar.tick(Math.min(chunks.length, start + 500))
  }
  embedBar.done(`${index.size} records`)
  index.save(demoIndexDir())
  return index
}

export const EXAMPLE_QUESTIONS = [
  'how do I pin an exact version when installing a package',
  'run tests in watch mode',
  'parse command line arguments',
  'semantic versioning range syntax',
]

/** The demo: build (or reuse) the index of package docs, then answer example questions. */
export async function runDocsDemo(): Promise<void> {
  const embedder = demoEmbedder()
  const index = await buildDemoIndex(embedder)
  for (const question of EXAMPLE_QUESTIONS) {
    printHits(`Q: ${question}`, index, await index.query({ text: question, topK: 5 }))
  }
  console.log('\nThe same corpus through a Google API, in process (Generative Language Semantic Retriever):')
  await runSemanticRetrieverDemo(embedder, EXAMPLE_QUESTIONS[1] as string)
  console.log('\n... and through Vertex AI RAG Engine (v1beta1), in process:')
  await runVertexRagDemo(embedder, EXAMPLE_QUESTIONS[0] as string)
  console.log('\n... and an agent\'s memories through Vertex AI Agent Engine Memory Bank, in process:')
  await runMemoryBankDemo(embedder)
  console.log(`\nSaved the index to ${demoIndexDir()}; ask more with: npx -y pnpm@12.4.2 quarry query "your question"`)
}

/** Answers one question against the saved demo index (no re-ingest). */
export async function runQuery(question: string, topK = 5): Promise<void> {
  const embedder = demoEmbedder()
  const index = loadIndex(demoIndexDir(), { embedder })
  printHits(`Q: ${question}`, index, await index.query({ text: question, topK }))
}

function printHits(title: string, index: QuarryIndex, result: SearchResult): void {
  console.log(`\n${title}`)
  console.log(`  ${result.stats.strategy}: ${result.stats.reason}`)
  const rows = result.hits.map((hit, i) => {
    const text = index.get(hit.id)?.text
    const snippet = (typeof text === 'string' ? text : '').replace(/\s+/g, ' ').slice(0, 70)
    return [i + 1, hit.score, String(hit.metadata.source ?? hit.id).slice(0, 48), snippet]
  })
  console.log(
    renderTable(['rank', 'score', 'source', 'snippet'], rows)
      .split('\n')
      .map((line) => `  ${line}`)
      .join('\n'),
  )
}
