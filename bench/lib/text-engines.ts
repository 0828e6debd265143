import { createRequire } from 'node:module'
import { create, insertMultiple, search as oramaSearch, type AnyOrama } from '@orama/orama'
import { stemmer as oramaStemmer } from '@orama/stemmers/english'
import { stopwords as oramaStopwords } from '@orama/stopwords/english'
import { Index as FlexIndex } from 'flexsearch'
import MiniSearch from 'minisearch'
import { createIndex, type AnalyzerOptions, type QuarryIndex } from '@quarry/core'

/** A document of the text benchmarks. */
export interface TextDoc {
  readonly id: string
  readonly title: string
  readonly text: string
}

export interface Scored {
  readonly id: string
  readonly score: number
}

/** A full-text engine under test; Orama's API is asynchronous, so every engine is called that way here. */
export interface TextEngine {
  readonly name: string
  add(docs: readonly TextDoc[]): Promise<void>
  search(query: string, k: number): Promise<Scored[]>
}

const require = createRequire(import.meta.url)

/** Quarry's BM25 with the default analyzer (wink-nlp tokens, stop words, Porter2) unless told otherwise. */
export function quarryText(name = 'quarry-bm25', analyzer?: AnalyzerOptions): TextEngine & { index: QuarryIndex } {
  const index = createIndex({ text: analyzer ? { analyzer } : {} })
  return {
    name,
    index,
    add: async (docs) => {
      for (const d of docs) index.add({ id: d.id, text: { title: d.title, text: d.text } })
    },
    search: async (query, k) => index.search({ text: query, topK: k }).hits.map((h) => ({ id: h.id, score: h.score })),
  }
}

interface WinkUtils {
  string: { lowerCase(s: string): string; tokenize0(s: string): string[] }
  tokens: { removeWords(t: string[]): string[]; stem(t: string[]): string[] }
}
const winkUtils = require('wink-nlp-utils') as WinkUtils

/** Porter2 and wink's stop-word list for the peers that take a term processor. */
const stopWordSet = new Set<string>(require('wink-nlp-utils/src/dictionaries/stop_words.json') as string[])
const stemCache = new Map<string, string>()
function porter2(term: string): string {
  let s = stemCache.get(term)
  if (s === undefined) {
    s = winkUtils.tokens.stem([term])[0] ?? term
    stemCache.set(term, s)
  }
  return s
}

/** MiniSearch over title and text; with `stem`, the processTerm its docs show (stop words + stemmer). */
export function miniSearch(stem: boolean): TextEngine {
  const ms = new MiniSearch<TextDoc>({
    fields: ['title', 'text'],
    idField: 'id',
    ...(stem
      ? {
          processTerm: (term: string) => {
            const t = term.toLowerCase()
            return stopWordSet.has(t) ? null : porter2(t)
          },
        }
      : {}),
  })
  return {
    name: stem ? 'minisearch+stem' : 'minisearch',
    add: async (docs) => ms.addAll(docs as TextDoc[]),
    search: async (query, k) => ms.search(query).slice(0, k).map((r) => ({ id: String(r.id), score: r.score })),
  }
}

/** Orama's full-text search; with `stem`, its documented English stemmer and stop words. */
export function orama(stem: boolean): TextEngine {
  const db: AnyOrama = create({
    schema: { id: 'string', title: 'string', text: 'string' } as const,
    ...(stem ? { components: { tokenizer: { stemming: true, stemmer: oramaStemmer, stopWords: oramaStopwords } } } : {}),
  })
  return {
    name: stem ? 'orama+stem' : 'orama',
    add: async (docs) => {
      await insertMultiple(db, docs.map((d) => ({ id: d.id, title: d.title, text: d.text })), 1000)
    },
    search: async (query, k) => {
      const r = await oramaSearch(db, { term: query, properties: ['title', 'text'], limit: k })
      return r.hits.map((h) => ({ id: String(h.id), score: h.score }))
    },
  }
}

interface WinkBm25 {
  defineConfig(c: { fldWeights: Record<string, number>; bm25Params?: Record<string, number> }): void
  definePrepTasks(tasks: ((x: never) => unknown)[]): void
  addDoc(doc: Record<string, string>, id: string): void
  consolidate(): void
  search(q: string, k?: number): [string, number][]
}

/** wink-bm25-text-search with the wink-nlp-utils preparation its README shows. */
export function winkBm25(): TextEngine {
  const engine = (require('wink-bm25-text-search') as () => WinkBm25)()
  engine.defineConfig({ fldWeights: { title: 1, text: 1 }, bm25Params: { k1: 1.2, b: 0.75, k: 1 } })
  engine.definePrepTasks([winkUtils.string.lowerCase, winkUtils.string.tokenize0, winkUtils.tokens.removeWords, winkUtils.tokens.stem] as ((x: never) => unknown)[])
  let consolidated = false
  return {
    name: 'wink-bm25',
    add: async (docs) => {
      for (const d of docs) engine.addDoc({ title: d.title, text: d.text }, d.id)
    },
    search: async (query, k) => {
      if (!consolidated) {
        engine.consolidate()
        consolidated = true
      }
      return engine.search(query, k).map(([id, score]) => ({ id: String(id), score }))
    },
  }
}

/** FlexSearch's Index with its default ("strict") tokenizer over title + text. It has no BM25 and
 * intersects multi-term queries (AND), so it answers a different, cheaper question. */
export function flexSearch(): TextEngine {
  const index = new FlexIndex({ tokenize: 'strict' })
  return {
    name: 'flexsearch',
    add: async (docs) => {
      for (const d of docs) index.add(Number(d.id), `${d.title} ${d.text}`)
    },
    search: async (query, k) => (index.search(query, k) as number[]).map((id, rank) => ({ id: String(id), score: -rank })),
  }
}
