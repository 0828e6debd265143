import { dirname, resolve } from 'node:path'
import { omitUndefined } from '../rpc/omit.js'
import { MAX_TOP_K, type Filter, type QuarryIndex, type SearchResult } from '@quarry/core'
import { numberOption, optionLines, parseArgs, specOf, type OptionDoc } from './args.js'
import { embedderOfIndex } from './embedders.js'
import { usageError } from './fail.js'
import { compileFilter, FILTER_FIELDS } from './filter.js'
import { hitSource, hitsTable, hitText, SNIPPET_WIDTH } from './hits.js'
import { quarryCommand } from './invocation.js'
import { DEFAULT_INDEX_DIR, indexDir, openIndex, shellWord, shown } from './local-index.js'

/** The options of `quarry search`: its parser and its help. */
export const SEARCH_OPTIONS: readonly OptionDoc[] = [
  { name: 'index', value: 'DIR', help: `the index folder (default ${DEFAULT_INDEX_DIR})` },
  { name: 'top', value: 'N', help: `number of results, 1 to ${MAX_TOP_K} (default 10)` },
  { name: 'alpha', value: 'A', help: '0 = words only (BM25), 1 = meaning only (dense), between: both (default 0.5)' },
  {
    name: 'filter',
    value: 'EXPR',
    help: `keep results whose file matches, e.g. 'ext = "md"',
'source = "docs/*" AND NOT chunk = 0'; fields: ${Object.keys(FILTER_FIELDS).join(', ')};
= != < <= > >=, AND, OR, NOT, ( ); "*" in a quoted string matches any characters.
source is the file's path relative to the folder holding the index, with /
separators: docs/guide/install.md (not ./docs/... nor an absolute path)`,
  },
  { name: 'json', help: 'print {"hits": [{"id", "source", "score", "text", "chunk", "start", "end", ...}]}' },
]

function usage(): string {
  const q = quarryCommand()
  return `usage: ${q} search "<text>" [--index DIR] [--top N] [--alpha A] [--filter EXPR] [--json]

  Searches the index built by \`${q} index\`: BM25 and dense (GloVe SIF) results, fused. The score
  is higher for better matches: BM25's at --alpha 0, the cosine similarity at 1, and between them
  the fused relevance from 0 to 1 (1 for a passage best on both sides). On a terminal
  the matched words are bold; piped, the passage is plain text.
${optionLines(SEARCH_OPTIONS)}`
}

/**
 * Searches a saved index by text: hybrid (the query embedded with the embedder that built the
 * index, rebuilt from its recorded name) unless alpha is 0 or the index has no vectors.
 */
export async function searchSaved(index: QuarryIndex, dir: string, request: { text: string; topK: number; alpha: number; filter?: Filter }): Promise<SearchResult> {
  const embedder = request.alpha > 0 && index.options.dimensions !== undefined ? embedderOfIndex(index, shown(dir)) : undefined
  if (!embedder) return index.search(omitUndefined({ text: request.text, topK: request.topK, filter: request.filter }))
  const [vector] = await embedder.embed([request.text])
  return index.search({ ...request, vector: vector as Float32Array })
}

/** `quarry search`: resolves to the exit code. */
export async function runSearch(args: readonly string[]): Promise<number> {
  const help = usage()
  const parsed = parseArgs(args, specOf(SEARCH_OPTIONS, true), help)
  if (parsed.has('help')) {
    console.log(help)
    return 0
  }
  const text = parsed.positionals.join(' ').trim()
  if (text === '') throw usageError(`give the text to search for, e.g. ${quarryCommand()} search "how do I configure logging"`, help)
  const topK = numberOption(parsed, 'top', { min: 1, max: MAX_TOP_K, integer: true, fallback: 10 }, help)
  const alpha = numberOption(parsed, 'alpha', { min: 0, max: 1, integer: false, fallback: 0.5 }, help)
  const dir = indexDir(parsed.value('index'))
  const flag = parsed.value('index')
  const index = openIndex(dir, `run \`${quarryCommand()} index <path>...${flag === undefined ? '' : ` --index ${shellWord(flag)}`}\` first`)
  const expression = parsed.value('filter')
  const compiled = expression === undefined ? undefined : compileFilter(expression, index, help)
  const filter = compiled?.filter
  const result = await searchSaved(index, dir, omitUndefined({ text, topK, alpha, filter }))
  if (parsed.has('json')) {
    const hits = result.hits.map((hit) => ({ id: hit.id, source: hitSource(hit), score: hit.score, text: hitText(index, hit), ...fileFields(hit.metadata) }))
    console.log(JSON.stringify({ hits }, null, 2))
    if (hits.length === 0 && compiled && compiled.unmatchedSources.length > 0) console.error(sourceHint(index, dir, compiled.unmatchedSources))
    return 0
  }
  if (result.hits.length === 0) {
    console.log(`No passage in ${shown(dir)} matches "${text}"${filter ? ' with that filter' : ''}.`)
    if (compiled && compiled.unmatchedSources.length > 0) console.log(sourceHint(index, dir, compiled.unmatchedSources))
    return 0
  }
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined
  console.log(hitsTable(index, text, result.hits, { snippetWidth: columns ? Math.max(40, Math.min(160, columns - 62)) : SNIPPET_WIDTH }))
  return 0
}

/**
 * Why a `source` filter kept nothing: no indexed file has that path. Says which form the stored
 * paths take, with one of them as the example.
 */
function sourceHint(index: QuarryIndex, dir: string, unmatched: readonly string[]): string {
  let example: string | undefined
  for (const id of index.ids()) {
    const source = index.get(id)?.metadata.source
    if (typeof source === 'string') {
      example = source
      break
    }
  }
  const values = unmatched.map((v) => `"${v}"`).join(', ')
  const slash = example?.indexOf('/') ?? -1
  const examples = example === undefined ? '' : `, e.g. source = "${example}"${slash > 0 ? ` or source = "${example.slice(0, slash)}/*"` : ''}`
  return `No indexed file's source matches ${values}. Sources are paths relative to ${shown(dirname(resolve(dir)))} (the folder holding the index), with / separators${examples}.`
}

/** The chunk's place in its file, from its metadata (chunk, start, end, page). */
function fileFields(metadata: Readonly<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const key of ['chunk', 'start', 'end', 'page']) {
    const v = metadata[key]
    if (typeof v === 'number') out[key] = v
  }
  return out
}
