import { join } from 'node:path'
import { Analyzer, chunkText, createIndex, defaultCacheDir, type Embedder, type QuarryIndex, type SearchResult } from '@quarry/core'
import { packageDocs } from './package-docs.js'
import { runSemanticRetrieverDemo } from './demo-semantic-retriever.js'
import { runVertexRagDemo } from './demo-vertex-rag.js'
import { runMemoryBankDemo } from './demo-memory-bank.js'
import { createCliEmbedder } from './embedders.js'
import { hitsTable } from './hits.js'
import { quarryCommand } from './invocation.js'
import { openIndex } from './local-index.js'
import { progress } from './progress.js'
import { searchSaved } from './search.js'

/** Where the demo keeps its index between runs. */
export function demoIndexDir(): string {
  return join(defaultCacheDir(), 'demo-index')
}

/** The default embedder, with a progress bar for its one-time cache conversion. */
function demoEmbedder(): Embedder {
  return createCliEmbedder('glove')
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

const EXAMPLE_QUESTIONS = [
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
    printHits(question, index, await index.query({ text: question, topK: 5 }))
  }
  console.log('\nThe same corpus through a Google API, in process (Generative Language Semantic Retriever):')
  await runSemanticRetrieverDemo(embedder, EXAMPLE_QUESTIONS[1] as string)
  console.log('\n... and through Vertex AI RAG Engine (v1beta1), in process:')
  await runVertexRagDemo(embedder, EXAMPLE_QUESTIONS[0] as string)
  console.log('\n... and an agent\'s memories through Vertex AI Agent Engine Memory Bank, in process:')
  await runMemoryBankDemo(embedder)
  const q = quarryCommand()
  console.log(`\nSaved the index to ${demoIndexDir()}; ask more with: ${q} query "your question"`)
  console.log(`Index your own files with: ${q} index <folder>, then ${q} search "your question"`)
}

/**
 * Answers one question against the saved demo index (no re-ingest). The index is opened before
 * the embedder loads: without a demo run, this says so at once.
 */
export async function runQuery(question: string, topK = 5): Promise<void> {
  const dir = demoIndexDir()
  const index = openIndex(dir, `run \`${quarryCommand()} demo\` first (it builds the index that query answers from)`)
  printHits(question, index, await searchSaved(index, dir, { text: question, topK, alpha: 0.5 }))
}

function printHits(question: string, index: QuarryIndex, result: SearchResult): void {
  console.log(`\nQ: ${question}`)
  console.log(`  ${result.stats.strategy}: ${result.stats.reason}`)
  console.log(
    hitsTable(index, question, result.hits, { snippetWidth: 70 })
      .split('\n')
      .map((line) => `  ${line}`)
      .join('\n'),
  )
}
