import type { Filter, QuarryIndex } from '@quarry/core'
import { parseFilter, type FilterExpr } from '../rpc/aip160.js'
import { toCoreFilter, type KeyType } from '../rpc/aip160-filter.js'
import { RpcFailure } from '../rpc/status.js'
import { usageError } from './fail.js'

/** The fields `quarry search --filter` reads: the chunk records' metadata (see local-index.ts). */
export const FILTER_FIELDS: Readonly<Record<string, KeyType>> = {
  source: 'string',
  ext: 'string',
  chunk: 'number',
  page: 'number',
}

/**
 * `--filter`: the AIP-160 subset of Vertex AI RAG Engine's `metadataFilter` (`= != < <= > >=`,
 * `AND`, `OR`, `NOT` / `-`, parentheses; strings in double quotes) over {@link FILTER_FIELDS},
 * plus wildcards: a string compared with `=` or `!=` may hold `*`, any run of characters (`/`
 * included), e.g. `source = "docs/*" AND NOT ext = "json"`. A wildcard is expanded against the
 * values in the index into an `in` / `nin` filter, so the value indexes still answer it.
 * A filter that does not parse or names an unknown field is a usage error (`usage` follows it).
 * `unmatchedSources`: the values `source =` compared with (a pattern or a path) that no indexed
 * file's source matches, for the hint when nothing is found.
 */
export function compileFilter(expression: string, index: QuarryIndex, usage: string): { filter: Filter; unmatchedSources: string[] } {
  let parsed: FilterExpr
  try {
    parsed = parseFilter(expression, '--filter')
  } catch (error) {
    if (error instanceof RpcFailure) throw usageError(error.message, usage)
    throw error
  }
  const unmatchedSources: string[] = []
  const distinct = new Map<string, string[]>()
  const valuesOf = (field: string): string[] => {
    let values = distinct.get(field)
    if (!values) {
      const set = new Set<string>()
      for (const id of index.ids()) {
        const v = index.get(id)?.metadata[field]
        if (typeof v === 'string') set.add(v)
      }
      values = [...set].sort()
      distinct.set(field, values)
    }
    return values
  }
  const fields = { path: '--filter', fieldOf: (key: string) => key, typeOf: (key: string) => FILTER_FIELDS[key] }
  const compile = (e: FilterExpr): Filter => {
    switch (e.k) {
      case 'and':
      case 'or':
        return { op: e.k, filters: e.items.map(compile) }
      case 'not':
        return { op: 'not', filter: compile(e.expr) }
      case 'has':
      case 'cmp': {
        if (FILTER_FIELDS[e.field] === undefined) throw usageError(`--filter: unknown field "${e.field}"; filters read ${Object.keys(FILTER_FIELDS).join(', ')}`, usage)
        if (e.k === 'cmp' && (e.op === '=' || e.op === '!=') && e.value.t === 'string' && e.value.v.includes('*')) {
          const pattern = wildcard(e.value.v)
          const values = valuesOf(e.field).filter((v) => pattern.test(v))
          if (e.field === 'source' && e.op === '=' && values.length === 0) unmatchedSources.push(e.value.v)
          return { op: e.op === '=' ? 'in' : 'nin', field: e.field, values }
        }
        if (e.k === 'cmp' && e.field === 'source' && e.op === '=' && e.value.t === 'string' && !valuesOf('source').includes(e.value.v)) unmatchedSources.push(e.value.v)
        return toCoreFilter(e, fields)
      }
    }
  }
  try {
    return { filter: compile(parsed), unmatchedSources }
  } catch (error) {
    // A value of the wrong type for its field (chunk = "x").
    if (error instanceof RpcFailure) throw usageError(error.message, usage)
    throw error
  }
}

/** A `*` wildcard as an anchored regular expression (every other character literal). */
function wildcard(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's')
}
