import { Analyzer, chunkText, type Embedder } from '@quarry/core'
import { seededRandomId } from '../rpc/names.js'
import { RetrieverServiceClient } from '../semantic-retriever/client.js'
import type { QueryResponseJson } from '../semantic-retriever/resources.js'
import { packageDocs } from './package-docs.js'
import { progress } from './progress.js'
import { renderTable, scoreHeader } from './table.js'

/** `@scope/name/README.md` → `@scope/name`; `name/docs/x.md` → `name`. */
function packageOf(source: string): string {
  const parts = source.split('/')
  return (source.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/')
}

/**
 * The same package docs through the Semantic Retriever API, in process: one corpus, a document
 * per package (its name as custom metadata), chunks created in batches of 100, then
 * corpora.query without and with a document-level metadata filter.
 */
export async function runSemanticRetrieverDemo(embedder: Embedder, question: string): Promise<void> {
  const client = new RetrieverServiceClient({ embedder, randomId: seededRandomId(1) })
  const [corpus] = await client.createCorpus({ corpus: { displayName: 'npm package docs' } })
  const byPackage = new Map<string, { file: string; text: string; start: number }[]>()
  const analyzer = new Analyzer()
  for (const doc of packageDocs()) {
    const list = byPackage.get(packageOf(doc.source)) ?? []
    for (const c of chunkText(analyzer, doc.text, { size: 200, overlap: 40 })) list.push({ file: doc.source, text: c.text, start: c.start })
    byPackage.set(packageOf(doc.source), list)
  }
  const total = [...byPackage.values()].reduce((n, l) => n + l.length, 0)
  const bar = progress(`Semantic Retriever: ${corpus.name}, a document per package, chunks:batchCreate`, total, 'chunks')
  let done = 0
  for (const [pkg, chunks] of byPackage) {
    const [document] = await client.createDocument({ parent: corpus.name, document: { displayName: pkg, customMetadata: [{ key: 'package', stringValue: pkg }] } })
    for (let i = 0; i < chunks.length; i += 100) {
      const requests = chunks.slice(i, i + 100).map((c) => ({
        chunk: { data: { stringValue: c.text }, customMetadata: [{ key: 'file', stringValue: c.file }, { key: 'offset', numericValue: c.start }] },
      }))
      await client.batchCreateChunks({ parent: document.name, requests })
      done += requests.length
      bar.tick(done)
    }
  }
  bar.done(`${byPackage.size} documents, ${done} chunks`)

  const [answer] = await client.queryCorpus({ name: corpus.name, query: question, resultsCount: 5 })
  printRelevant(`corpora.query {"query": "${question}", "resultsCount": 5}`, answer)
  const top = answer.relevantChunks?.[0]?.document?.displayName
  if (top !== undefined) {
    const metadataFilters = [{ key: 'document.custom_metadata.package', conditions: [{ operation: 'NOT_EQUAL', stringValue: top }] }]
    const [others] = await client.queryCorpus({ name: corpus.name, query: question, resultsCount: 5, metadataFilters })
    printRelevant(`corpora.query, same question, metadataFilters: package NOT_EQUAL "${top}"`, others)
  }
  try {
    await client.queryCorpus({ name: corpus.name, query: question, resultsCount: 500 })
  } catch (error) {
    const e = error as { code: number; message: string }
    console.log(`\n  A bad request is answered, not thrown past the client: resultsCount 500 → code ${e.code} (INVALID_ARGUMENT): ${e.message}`)
  }
}

function printRelevant(title: string, response: QueryResponseJson): void {
  console.log(`\n${title}`)
  const rows = (response.relevantChunks ?? []).map((r, i) => {
    const file = r.chunk.customMetadata?.find((m) => m.key === 'file')
    return [i + 1, r.chunkRelevanceScore ?? 0, (file && 'stringValue' in file ? file.stringValue : r.chunk.name).slice(0, 48), r.chunk.data.stringValue.replace(/\s+/g, ' ').slice(0, 60)]
  })
  console.log(
    renderTable(['rank', scoreHeader('chunkRelevanceScore', 'higher'), 'file', 'snippet'], rows)
      .split('\n')
      .map((line) => `  ${line}`)
      .join('\n'),
  )
}
