import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { ApiError, Code, RetrieverServiceClient, seededRandomId } from '@quarry/adapters'
import { runs } from '../support/runs.js'

/**
 * Model-based test of the Semantic Retriever's resource management: random sequences of
 * create / update / delete (with and without force) / batch writes run against the engine and
 * against plain arrays; after every step, paging through every list (random page sizes) must give
 * exactly the model — nothing lost, nothing extra, creation order — and queries only ever return
 * live chunks.
 */
interface MChunk { name: string; text: string }
interface MDoc { name: string; displayName: string; chunks: MChunk[] }
interface MCorpus { name: string; docs: MDoc[] }
interface Model { corpora: MCorpus[] }

const LIMITS = { corpora: 3, documentsPerCorpus: 3, chunksPerCorpus: 5 }
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega']

type Real = RetrieverServiceClient
type Cmd = fc.AsyncCommand<Model, Real>

async function rejects(p: Promise<unknown>, code: number): Promise<void> {
  const error = await p.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(ApiError)
  expect((error as ApiError).code).toBe(code)
}

const pick = <T>(list: readonly T[], i: number): T | undefined => (list.length === 0 ? undefined : list[i % list.length])
const allDocs = (m: Model): MDoc[] => m.corpora.flatMap((c) => c.docs)
const allChunks = (m: Model): MChunk[] => allDocs(m).flatMap((d) => d.chunks)
const corpusOf = (m: Model, docName: string): MCorpus => m.corpora.find((c) => docName.startsWith(`${c.name}/`)) as MCorpus
const chunkCount = (c: MCorpus): number => c.docs.reduce((n, d) => n + d.chunks.length, 0)

class CreateCorpus implements Cmd {
  constructor(readonly id: string) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const name = `corpora/${this.id}`
    if (m.corpora.some((c) => c.name === name)) return rejects(r.createCorpus({ corpus: { name } }), Code.ALREADY_EXISTS)
    if (m.corpora.length >= LIMITS.corpora) return rejects(r.createCorpus({ corpus: { name } }), Code.RESOURCE_EXHAUSTED)
    const [corpus] = await r.createCorpus({ corpus: { name } })
    expect(corpus.name).toBe(name)
    m.corpora.push({ name, docs: [] })
  }
  toString = (): string => `CreateCorpus(${this.id})`
}

class DeleteCorpus implements Cmd {
  constructor(readonly i: number, readonly force: boolean) {}
  check = (m: Readonly<Model>): boolean => m.corpora.length > 0
  async run(m: Model, r: Real): Promise<void> {
    const c = pick(m.corpora, this.i) as MCorpus
    if (c.docs.length > 0 && !this.force) return rejects(r.deleteCorpus({ name: c.name }), Code.FAILED_PRECONDITION)
    await r.deleteCorpus({ name: c.name, force: this.force })
    m.corpora.splice(m.corpora.indexOf(c), 1)
  }
  toString = (): string => `DeleteCorpus(${this.i}, force=${this.force})`
}

class CreateDocument implements Cmd {
  constructor(readonly i: number, readonly id: string, readonly displayName: string) {}
  check = (m: Readonly<Model>): boolean => m.corpora.length > 0
  async run(m: Model, r: Real): Promise<void> {
    const c = pick(m.corpora, this.i) as MCorpus
    const name = `${c.name}/documents/${this.id}`
    const request = { parent: c.name, document: { name, displayName: this.displayName } }
    if (c.docs.some((d) => d.name === name)) return rejects(r.createDocument(request), Code.ALREADY_EXISTS)
    if (c.docs.length >= LIMITS.documentsPerCorpus) return rejects(r.createDocument(request), Code.RESOURCE_EXHAUSTED)
    const [doc] = await r.createDocument(request)
    expect(doc.name).toBe(name)
    c.docs.push({ name, displayName: this.displayName, chunks: [] })
  }
  toString = (): string => `CreateDocument(${this.i}, ${this.id}, ${this.displayName})`
}

class UpdateDocument implements Cmd {
  constructor(readonly i: number, readonly displayName: string) {}
  check = (m: Readonly<Model>): boolean => allDocs(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const d = pick(allDocs(m), this.i) as MDoc
    const [doc] = await r.updateDocument({ document: { name: d.name, displayName: this.displayName }, updateMask: { paths: ['displayName'] } })
    expect(doc.displayName ?? '').toBe(this.displayName)
    d.displayName = this.displayName
  }
  toString = (): string => `UpdateDocument(${this.i}, ${this.displayName})`
}

class DeleteDocument implements Cmd {
  constructor(readonly i: number, readonly force: boolean) {}
  check = (m: Readonly<Model>): boolean => allDocs(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const d = pick(allDocs(m), this.i) as MDoc
    if (d.chunks.length > 0 && !this.force) return rejects(r.deleteDocument({ name: d.name }), Code.FAILED_PRECONDITION)
    await r.deleteDocument({ name: d.name, force: this.force })
    const c = corpusOf(m, d.name)
    c.docs.splice(c.docs.indexOf(d), 1)
  }
  toString = (): string => `DeleteDocument(${this.i}, force=${this.force})`
}

class CreateChunks implements Cmd {
  constructor(readonly i: number, readonly texts: readonly string[]) {}
  check = (m: Readonly<Model>): boolean => allDocs(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const d = pick(allDocs(m), this.i) as MDoc
    const c = corpusOf(m, d.name)
    const request = { parent: d.name, requests: this.texts.map((t) => ({ chunk: { data: { stringValue: t } } })) }
    if (chunkCount(c) + this.texts.length > LIMITS.chunksPerCorpus) return rejects(r.batchCreateChunks(request), Code.RESOURCE_EXHAUSTED)
    const [{ chunks = [] }] = await r.batchCreateChunks(request)
    expect(chunks.map((ch) => ch.data.stringValue)).toEqual(this.texts)
    for (const ch of chunks) {
      expect(ch.state).toBe('STATE_ACTIVE')
      d.chunks.push({ name: ch.name, text: ch.data.stringValue })
    }
  }
  toString = (): string => `CreateChunks(${this.i}, ${JSON.stringify(this.texts)})`
}

class UpdateChunk implements Cmd {
  constructor(readonly i: number, readonly text: string) {}
  check = (m: Readonly<Model>): boolean => allChunks(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const ch = pick(allChunks(m), this.i) as MChunk
    const [updated] = await r.updateChunk({ chunk: { name: ch.name, data: { stringValue: this.text } }, updateMask: { paths: ['data'] } })
    expect(updated.data.stringValue).toBe(this.text)
    ch.text = this.text
  }
  toString = (): string => `UpdateChunk(${this.i}, ${this.text})`
}

class DeleteChunk implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>): boolean => allChunks(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const ch = pick(allChunks(m), this.i) as MChunk
    await r.deleteChunk({ name: ch.name })
    for (const d of allDocs(m)) {
      const at = d.chunks.indexOf(ch)
      if (at >= 0) d.chunks.splice(at, 1)
    }
    await rejects(r.getChunk({ name: ch.name }), Code.NOT_FOUND)
  }
  toString = (): string => `DeleteChunk(${this.i})`
}

/** Pages through every list with one page size and compares with the model, then queries every corpus. */
class CheckEverything implements Cmd {
  constructor(readonly pageSize: number) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const opts = { autoPaginate: false } as const
    const pageAll = async <T>(list: (req: Record<string, unknown>) => Promise<[T[], Record<string, unknown> | null, unknown]>, req: Record<string, unknown>): Promise<T[]> => {
      const out: T[] = []
      let next: Record<string, unknown> | null = { ...req, pageSize: this.pageSize }
      while (next) {
        const [items, following] = await list(next)
        expect(items.length).toBeLessThanOrEqual(this.pageSize)
        out.push(...items)
        next = following
      }
      return out
    }
    const corpora = await pageAll((q) => r.listCorpora(q, opts), {})
    expect(corpora.map((c) => c.name)).toEqual(m.corpora.map((c) => c.name))
    for (const c of m.corpora) {
      const docs = await pageAll((q) => r.listDocuments(q, opts), { parent: c.name })
      expect(docs.map((d) => [d.name, d.displayName ?? ''])).toEqual(c.docs.map((d) => [d.name, d.displayName]))
      for (const d of c.docs) {
        const chunks = await pageAll((q) => r.listChunks(q, opts), { parent: d.name })
        expect(chunks.map((ch) => [ch.name, ch.data.stringValue])).toEqual(d.chunks.map((ch) => [ch.name, ch.text]))
      }
      const [{ relevantChunks = [] }] = await r.queryCorpus({ name: c.name, query: 'alpha beta', resultsCount: 100 })
      const live = new Map(c.docs.flatMap((d) => d.chunks.map((ch) => [ch.name, ch.text] as const)))
      expect(relevantChunks.length).toBe(live.size)
      for (const rc of relevantChunks) expect(rc.chunk.data.stringValue).toBe(live.get(rc.chunk.name))
    }
  }
  toString = (): string => `CheckEverything(pageSize=${this.pageSize})`
}

const id = fc.constantFrom('a', 'b', 'c', 'd')
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '))
const commands = [
  id.map((x) => new CreateCorpus(x)),
  fc.tuple(fc.nat(), fc.boolean()).map(([i, f]) => new DeleteCorpus(i, f)),
  fc.tuple(fc.nat(), id, fc.constantFrom('', 'Doc', 'Other')).map(([i, x, n]) => new CreateDocument(i, x, n)),
  fc.tuple(fc.nat(), fc.constantFrom('', 'Renamed')).map(([i, n]) => new UpdateDocument(i, n)),
  fc.tuple(fc.nat(), fc.boolean()).map(([i, f]) => new DeleteDocument(i, f)),
  fc.tuple(fc.nat(), fc.array(text, { minLength: 1, maxLength: 3 })).map(([i, t]) => new CreateChunks(i, t)),
  fc.tuple(fc.nat(), text).map(([i, t]) => new UpdateChunk(i, t)),
  fc.nat().map((i) => new DeleteChunk(i)),
  fc.integer({ min: 1, max: 4 }).map((n) => new CheckEverything(n)),
]

describe('Semantic Retriever resources against a plain model', () => {
  it('keeps every resource, count and page in agreement with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 60, size: "max" }), async (cmds) => {
        const real = new RetrieverServiceClient({ embedder: createHashingEmbedder({ dimensions: 16 }), limits: LIMITS, randomId: seededRandomId(3) })
        await fc.asyncModelRun(() => ({ model: { corpora: [] }, real }), [...cmds, new CheckEverything(20)])
      }),
      { numRuns: runs(100) },
    )
  })

  it('pages neither skip nor repeat a chunk when chunks are added and deleted between pages', async () => {
    const r = new RetrieverServiceClient({ embedder: createHashingEmbedder({ dimensions: 16 }), randomId: seededRandomId(5) })
    await r.createCorpus({ corpus: { name: 'corpora/p' } })
    const parent = 'corpora/p/documents/d'
    await r.createDocument({ parent: 'corpora/p', document: { name: parent } })
    const [{ chunks: first = [] }] = await r.batchCreateChunks({ parent, requests: Array.from({ length: 25 }, (_, i) => ({ chunk: { name: `${parent}/chunks/c${i}`, data: { stringValue: `text ${i}` } } })) })
    const seen: string[] = []
    const deleted = new Set<string>()
    let token: string | undefined
    let round = 0
    do {
      const [, , page] = await r.listChunks({ parent, pageSize: 4, ...(token ? { pageToken: token } : {}) }, { autoPaginate: false })
      seen.push(...(page.chunks ?? []).map((c) => c.name))
      token = page.nextPageToken
      if (!token) break
      // Between pages: add a chunk (it comes last, so it is seen) and delete one not yet seen.
      await r.createChunk({ parent, chunk: { name: `${parent}/chunks/n${round}`, data: { stringValue: `new ${round}` } } })
      const unseen = first.map((c) => c.name).find((n) => !seen.includes(n) && !deleted.has(n) && !n.endsWith('c24'))
      if (unseen && round % 2 === 0) {
        await r.deleteChunk({ name: unseen })
        deleted.add(unseen)
      }
      round++
    } while (token)
    expect(new Set(seen).size).toBe(seen.length)
    const [everything] = await r.listChunks({ parent, pageSize: 100 }, { autoPaginate: false })
    // Every chunk alive at the end was seen exactly once, in creation order; deleted ones never were.
    expect(seen).toEqual(everything.map((c) => c.name))
    expect(deleted.size).toBeGreaterThan(0)
    expect(seen.filter((n) => n.includes('/n')).length).toBe(round)
    expect(round).toBeGreaterThan(5)
    expect(seen).toContain(`${parent}/chunks/c24`)
  })
})
