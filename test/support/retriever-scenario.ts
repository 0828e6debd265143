/**
 * A fixed Semantic Retriever history (corpora, documents and chunks with every kind of custom
 * metadata; updates and deletions) run against any version of the engine's API, with a clock
 * that ticks a second per reading: two engines given it hold the same state to the millisecond.
 * test/unit/persist-reuse.test.ts checks that a folder the previous format wrote
 * (test/support/retriever-v1/: this history run and saved with `saveTo` by cf058ce, the commit before
 * format version 2, hashing embedder of 16 dimensions, clock from `tickingClock`) loads
 * as the same state as this history run today.
 */
interface Retriever {
  createCorpus(request: unknown): Promise<{ ok: boolean }>
  updateCorpus(request: unknown): Promise<{ ok: boolean }>
  createDocument(request: unknown): Promise<{ ok: boolean }>
  updateDocument(request: unknown): Promise<{ ok: boolean }>
  deleteDocument(request: unknown): Promise<{ ok: boolean }>
  batchCreateChunks(request: unknown): Promise<{ ok: boolean }>
  updateChunk(request: unknown): Promise<{ ok: boolean }>
  deleteChunk(request: unknown): Promise<{ ok: boolean }>
}

/** A clock reading 2026-01-01T00:00:00Z, then a second later at each reading. */
export function tickingClock(): () => Date {
  let tick = 0
  return () => new Date(Date.UTC(2026, 0, 1) + 1000 * tick++)
}

export async function runRetrieverScenario(sr: Retriever): Promise<void> {
  const ok = async (call: Promise<{ ok: boolean }>, what: string): Promise<void> => {
    if (!(await call).ok) throw new Error(`the scenario's ${what} failed`)
  }
  for (const c of ['alpha', 'beta']) {
    await ok(sr.createCorpus({ corpus: { name: `corpora/${c}`, displayName: `Corpus ${c}` } }), 'createCorpus')
    for (const d of ['d1', 'd2']) {
      const document = `corpora/${c}/documents/${d}`
      await ok(sr.createDocument({ parent: `corpora/${c}`, document: { name: document, displayName: `${c} ${d}`, customMetadata: [{ key: 'year', numericValue: d === 'd1' ? 2001 : 2019 }, { key: 'tags', stringListValue: { values: ['river', c] } }] } }), 'createDocument')
      const texts = ['desert wind over the dunes', 'ocean storm at night', 'garden rose in the morning', 'quiet river stones']
      await ok(sr.batchCreateChunks({ parent: document, requests: texts.map((t, i) => ({ chunk: { name: `${document}/chunks/k${i}`, data: { stringValue: `${c} ${d}: ${t}` }, customMetadata: [{ key: 'part', stringValue: `p${i}` }] } })) }), 'batchCreateChunks')
    }
  }
  await ok(sr.updateCorpus({ corpus: { name: 'corpora/beta', displayName: 'Beta, renamed' }, updateMask: 'displayName' }), 'updateCorpus')
  await ok(sr.updateDocument({ document: { name: 'corpora/alpha/documents/d2', displayName: 'alpha d2, renamed', customMetadata: [{ key: 'year', numericValue: 2024 }] }, updateMask: 'displayName,customMetadata' }), 'updateDocument')
  await ok(sr.updateChunk({ chunk: { name: 'corpora/alpha/documents/d1/chunks/k1', data: { stringValue: 'alpha d1: a calm sea at dawn' } }, updateMask: 'data' }), 'updateChunk')
  await ok(sr.deleteChunk({ name: 'corpora/beta/documents/d1/chunks/k3' }), 'deleteChunk')
  await ok(sr.deleteDocument({ name: 'corpora/beta/documents/d2', force: true }), 'deleteDocument')
}
