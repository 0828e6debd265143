import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ANALYZER_DEFAULTS, BM25_DEFAULTS, HNSW_DEFAULTS, PLANNER_DEFAULTS, createIndex, type Filter, type QuarryErrorCode } from '@quarry/core'
import { ROOT, anchors, fencedBlocks, links, read, withoutCode } from './markdown.js'

/** The tables of the README and docs/ that restate the code, checked against it. */

// Records over the union types: adding a code or an operator without listing it here fails tsc.
const CODES: Record<QuarryErrorCode, true> = {
  INVALID_OPTION: true,
  INVALID_RECORD: true,
  INVALID_ID: true,
  DIMENSION_MISMATCH: true,
  INVALID_VECTOR: true,
  DUPLICATE_ID: true,
  UNKNOWN_ID: true,
  INVALID_QUERY: true,
  FILTER_FAILED: true,
  INVALID_SNAPSHOT: true,
  LOCKED: true,
  BUSY: true,
  EMBEDDER_MISMATCH: true,
  NATIVE_UNAVAILABLE: true,
}
const OPS: Record<Filter['op'], true> = {
  and: true, or: true, not: true, eq: true, ne: true, lt: true, lte: true, gt: true, gte: true,
  in: true, nin: true, includes: true, excludes: true, exists: true,
}

/** The rows of the first table after a heading: cells, trimmed (the header and the rule left out). */
function tableAfter(markdown: string, heading: string): string[][] {
  const lines = withoutCodeBlocks(markdown).split('\n')
  const start = lines.findIndex((l) => l.replace(/^#+\s*/, '') === heading && l.startsWith('#'))
  if (start < 0) throw new Error(`no heading "${heading}"`)
  const first = lines.findIndex((l, i) => i > start && l.startsWith('|'))
  const rows: string[][] = []
  for (let i = first + 2; i < lines.length && (lines[i] as string).startsWith('|'); i++) {
    rows.push((lines[i] as string).slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim()))
  }
  return rows
}

/** Fenced blocks blanked (inline code kept: table cells are made of it). */
function withoutCodeBlocks(markdown: string): string {
  const lines = markdown.split('\n')
  for (const b of fencedBlocks(markdown)) for (let i = b.line - 1; i <= b.line + b.code.split('\n').length; i++) lines[i] = ''
  return lines.join('\n')
}

const ticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string)

describe('the README and docs/ say what the code does', () => {
  it('the quick start comes first, with its two commands exactly', () => {
    const readme = read('README.md')
    const h2 = withoutCode(readme).split('\n').filter((l) => l.startsWith('## '))
    expect(h2[0]).toBe('## Quick start')
    const start = readme.indexOf('## Quick start')
    const [block] = fencedBlocks(readme.slice(start))
    expect(block?.code.split('\n').map((l) => l.replace(/\s+#.*$/, ''))).toEqual(['npx -y pnpm@12.4.2 run demo', 'npx -y pnpm@12.4.2 test'])
  })

  it('the README stays a front page: at most 200 lines, details in docs/', () => {
    const lines = read('README.md').replace(/\n$/, '').split('\n')
    expect(lines.length, 'README.md lines (move details into a docs/ page)').toBeLessThanOrEqual(200)
  })

  it('ARCHITECTURE.md stays an overview: at most 250 lines, folders not files, its anchors resolve', () => {
    const text = read('ARCHITECTURE.md')
    expect(text.replace(/\n$/, '').split('\n').length, 'ARCHITECTURE.md lines (say it per folder, not per file)').toBeLessThanOrEqual(250)
    const own = anchors(text)
    expect(links(text).filter((l) => l.target.startsWith('#') && !own.has(l.target.slice(1))).map((l) => l.target)).toEqual([])
    // The annotated file list it once opened with: a fenced block of paths under packages/.
    expect(fencedBlocks(text).filter((b) => /^packages\/\w+\/src\//m.test(b.code))).toEqual([])
  })

  it('docs/errors.md lists every QuarryError code, and no other', () => {
    const listed = tableAfter(read('docs/errors.md'), '`@quarry/core`: `QuarryError`').map((row) => ticked(row[0] as string)[0])
    expect(listed.sort()).toEqual(Object.keys(CODES).sort())
  })

  it('docs/filters.md documents every filter operator, and the README names them all', () => {
    const listed = tableAfter(read('docs/filters.md'), 'Operators').flatMap((row) => ticked(row[0] as string))
    expect(listed.sort()).toEqual(Object.keys(OPS).sort())
    const line = read('README.md').split('\n').findIndex((l) => l.includes('[The filter language]'))
    const named = read('README.md').split('\n').slice(line, line + 2).join(' ')
    for (const op of Object.keys(OPS)) expect(named).toContain(`\`${op}\``)
  })

  it('the options table of createIndex has every option with its real default', () => {
    const rows = tableAfter(read('docs/library.md'), 'Options of `createIndex`')
    const defaults = new Map<string, string>()
    for (const row of rows) {
      const names = ticked(row[0] as string)
      const values = (row[1] as string).split(' / ')
      // `text.analyzer.lowercase` / `foldAccents`: the later names share the first one's prefix.
      const prefix = (names[0] as string).slice(0, (names[0] as string).lastIndexOf('.') + 1)
      names.forEach((n, i) => defaults.set(n.includes('.') || i === 0 ? n : prefix + n, (values[i] ?? values[0] as string).replace(/`/g, '').replace(/'/g, '')))
    }
    const resolved = createIndex({ dimensions: 2, dense: 'exact' }).options
    const expected: Record<string, unknown> = {
      metric: resolved.metric,
      dense: 'hnsw',
      ...Object.fromEntries(Object.entries(HNSW_DEFAULTS).map(([k, v]) => [`hnsw.${k}`, v])),
      ...Object.fromEntries(Object.entries(PLANNER_DEFAULTS).map(([k, v]) => [`planner.${k}`, v])),
      ...Object.fromEntries(Object.entries(ANALYZER_DEFAULTS).map(([k, v]) => [`text.analyzer.${k}`, v])),
      ...Object.fromEntries(Object.entries(BM25_DEFAULTS).map(([k, v]) => [`text.bm25.${k}`, v])),
    }
    expect(resolved.hnsw).toEqual(HNSW_DEFAULTS)
    expect(resolved.planner).toEqual(PLANNER_DEFAULTS)
    expect(resolved.text.analyzer).toEqual(ANALYZER_DEFAULTS)
    for (const [name, value] of Object.entries(expected)) {
      expect(defaults.has(name), `${name} is in the table`).toBe(true)
      expect(defaults.get(name)?.replace(/,/g, ''), name).toBe(String(value))
    }
    for (const name of ['dimensions', 'embedder', 'text.fields.<name>.boost']) expect(defaults.has(name), name).toBe(true)
  })

  it('docs/dependencies.md says why each dependency is there, at its pinned version', () => {
    const rows = tableAfter(read('docs/dependencies.md'), 'Dependencies and why')
    const manifests = ['package.json', 'packages/core/package.json', 'packages/adapters/package.json', 'bench/package.json']
    const missing: string[] = []
    for (const manifest of manifests) {
      const json = JSON.parse(readFileSync(join(ROOT, manifest), 'utf8')) as Record<string, Record<string, string> | undefined>
      for (const kind of ['dependencies', 'devDependencies', 'optionalDependencies']) {
        for (const [name, version] of Object.entries(json[kind] ?? {})) {
          if (version.startsWith('workspace:')) continue
          // '@orama/stemmers' is written "(+ stemmers, ...)" in @orama/orama's row.
          const row = rows.find((r) => r[0]?.includes(name)) ?? rows.find((r) => name.includes('/') && r[0]?.includes(`${name.split('/')[0]}/`) && r[0].includes(name.split('/')[1] as string))
          if (!row || !row[1]?.includes(version)) missing.push(`${manifest}: ${name}@${version}`)
        }
      }
    }
    expect(missing).toEqual([])
  })
})
