import { readFileSync } from 'node:fs'
import { basename } from 'node:path'

/**
 * A judged test collection in BEIR's layout: `corpus.jsonl` ({"_id", "title", "text"} per line),
 * `queries.jsonl` ({"_id", "text"}) and qrels (query id, doc id, grade). `id` is read where `_id`
 * is missing (the layout of the collections in ../shared/data); qrels may be BEIR's TSV (three
 * columns, optional header) or TREC's (four columns: query, iteration, doc, grade).
 */
export interface Collection {
  readonly name: string
  readonly docs: readonly { readonly id: string; readonly title: string; readonly text: string }[]
  readonly queries: readonly { readonly id: string; readonly text: string }[]
  /** query id → doc id → grade (≥ 1: relevant). */
  readonly qrels: ReadonlyMap<string, ReadonlyMap<string, number>>
}

/** The three files of a collection. */
export interface CollectionFiles {
  readonly corpus: string
  readonly queries: string
  readonly qrels: string
}

/** A collection file that cannot be read: which file, which line (1-based) and what is wrong. */
export class CollectionError extends Error {
  override readonly name = 'CollectionError'
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    problem: string,
  ) {
    super(`${file}${line === undefined ? '' : ` line ${line}`}: ${problem}`)
  }
}

function lines(file: string): { text: string; line: number }[] {
  let content: string
  try {
    content = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new CollectionError(file, undefined, code === 'ENOENT' ? 'no such file' : `cannot be read (${code ?? 'error'})`)
  }
  return content
    .split('\n')
    .map((text, i) => ({ text: text.replace(/\r$/, ''), line: i + 1 }))
    .filter((l) => l.text.trim() !== '')
}

function idOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined
}

/** One JSON object per line with an id and the named string fields (missing ones read as ""). */
function readJsonl(file: string, fields: readonly string[]): { id: string; values: Record<string, string> }[] {
  const seen = new Set<string>()
  return lines(file).map(({ text, line }) => {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw new CollectionError(file, line, 'not a JSON object')
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CollectionError(file, line, 'not a JSON object')
    const o = value as Record<string, unknown>
    const id = idOf(o._id) ?? idOf(o.id)
    if (id === undefined) throw new CollectionError(file, line, 'has no "_id" (a non-empty string)')
    if (seen.has(id)) throw new CollectionError(file, line, `repeats the _id "${id}"`)
    seen.add(id)
    const values: Record<string, string> = {}
    for (const field of fields) {
      const v = o[field]
      if (v !== undefined && v !== null && typeof v !== 'string') throw new CollectionError(file, line, `"${field}" must be a string`)
      values[field] = v ?? ''
    }
    return { id, values }
  })
}

/** Qrels: tab-separated `query-id corpus-id score` (BEIR, an optional header) or whitespace-separated `query 0 doc grade` (TREC). */
function readQrels(file: string): Map<string, Map<string, number>> {
  const qrels = new Map<string, Map<string, number>>()
  lines(file).forEach(({ text, line }, i) => {
    const cells = (text.includes('\t') ? text.split('\t') : text.trim().split(/\s+/)).map((c) => c.trim())
    if (cells.length !== 3 && cells.length !== 4) throw new CollectionError(file, line, `has ${cells.length} columns; qrels have 3 (query-id, corpus-id, score) or 4 (TREC: query, iteration, doc, grade)`)
    const [q, d, g] = (cells.length === 3 ? cells : [cells[0], cells[2], cells[3]]) as [string, string, string]
    const grade = Number(g)
    if (g === '' || !Number.isFinite(grade)) {
      if (i === 0) return // a header line: query-id corpus-id score
      throw new CollectionError(file, line, `the score "${g}" is not a number`)
    }
    const grades = qrels.get(q) ?? new Map<string, number>()
    grades.set(d, grade)
    qrels.set(q, grades)
  })
  return qrels
}

/** Reads a collection; throws {@link CollectionError} naming the file and line of the first problem. */
export function readCollection(files: CollectionFiles, name: string = basename(files.corpus)): Collection {
  const docs = readJsonl(files.corpus, ['title', 'text']).map((d) => ({ id: d.id, title: d.values.title ?? '', text: d.values.text ?? '' }))
  const queries = readJsonl(files.queries, ['text']).map((q) => ({ id: q.id, text: q.values.text ?? '' }))
  return { name, docs, queries, qrels: readQrels(files.qrels) }
}
