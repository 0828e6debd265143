import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CROSSOVER_END, CROSSOVER_START, SUITES, renderBenchReadme, renderCrossover, withCrossover } from '../../bench/readme.js'
import { ROOT, read } from './markdown.js'

/** bench/README.md is generated from bench/results/*.json, so it says only what they hold. */
const RESULTS = join(ROOT, 'bench', 'results')

describe('bench/README.md', () => {
  it('is what `pnpm bench:readme` makes of the committed results (run it after a bench run)', () => {
    expect(read('bench/README.md')).toBe(renderBenchReadme(RESULTS))
  })

  it("docs/filters.md's crossover figures are what the committed filtered.json holds", () => {
    const filtered = JSON.parse(readFileSync(join(RESULTS, 'filtered.json'), 'utf8')) as Record<string, unknown>
    const page = read('docs/filters.md')
    expect(page).toBe(withCrossover(page, filtered))
    // The block is the results' own: the p50 of post-filtering at 10%, as the run recorded it.
    const crossover = (filtered['crossover'] as Record<string, { selectivity: number; strategies: Record<string, { p50ms: number }> }[]>)['clustered-64d-100k'] ?? []
    const tenth = crossover.find((r) => r.selectivity === 0.1)
    const block = page.slice(page.indexOf(CROSSOVER_START), page.indexOf(CROSSOVER_END))
    expect(block).toContain(renderCrossover(filtered))
    const shown = Number(block.split('\n').find((l) => l.startsWith('| 10,000 (10%) |'))?.split(' | ')[3])
    const recorded = tenth?.strategies['hnsw-postfilter']?.p50ms ?? Number.NaN
    // Shown at about three significant digits.
    expect(Math.abs(shown - recorded) / recorded).toBeLessThan(0.005)
  })

  it('refuses a results file without crossover rows, and a page without its markers, rather than writing an empty table', () => {
    const filtered = JSON.parse(readFileSync(join(RESULTS, 'filtered.json'), 'utf8')) as Record<string, unknown>
    expect(() => renderCrossover({ ...filtered, crossover: {} })).toThrow(/no crossover rows/)
    expect(() => withCrossover(`# Filters\n${CROSSOVER_END}\n`, filtered)).toThrow(/lacks the crossover markers/)
    expect(() => withCrossover(`${CROSSOVER_END}\n${CROSSOVER_START}\n`, filtered)).toThrow(/lacks the crossover markers/)
  })

  it('stays short: at most 250 lines, history in git', () => {
    expect(read('bench/README.md').replace(/\n$/, '').split('\n').length).toBeLessThanOrEqual(250)
  })

  it('has a section for every results file, one per suite, in the template order', () => {
    const listed = new Set(SUITES.flatMap((s) => s.files))
    expect(readdirSync(RESULTS).filter((f) => f.endsWith('.json') && !listed.has(f))).toEqual([])
    const headings = read('bench/README.md').split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3))
    expect(headings).toEqual(SUITES.map((s) => s.name))
  })

  it("shows dense's paired Quarry / hnswlib-node ratio from dense.json, per dataset", () => {
    const dense = JSON.parse(readFileSync(join(RESULTS, 'dense.json'), 'utf8')) as { datasets: Record<string, { quarryOverHnswlibPairedAtRecall: Record<string, { quarryOverRaw: number }> }> }
    const lines = read('bench/README.md').split('\n')
    for (const [name, d] of Object.entries(dense.datasets)) {
      const row = lines.find((l) => l.startsWith(`| ${name} | **quarry / hnswlib-node, paired**`))
      const expected = ['0.9', '0.95', '0.99'].map((t) => `**${(d.quarryOverHnswlibPairedAtRecall[t]?.quarryOverRaw ?? Number.NaN).toFixed(2)}×**`)
      expect(row?.split('|').slice(5, 8).map((c) => c.trim())).toEqual(expected)
    }
  })

  it('says "not recorded" where a results file lacks the date or the machine, and what it recorded otherwise', () => {
    const page = read('bench/README.md')
    let lacking = 0
    for (const suite of SUITES) {
      const [file] = suite.files
      const parsed = JSON.parse(readFileSync(join(RESULTS, file as string), 'utf8')) as unknown
      const r = (Array.isArray(parsed) ? parsed[0] : parsed) as { date?: string; node?: string; cpus?: number }
      const section = (page.split(`\n## ${suite.name}\n`)[1] ?? '').split('\n## ')[0] ?? ''
      expect(section, suite.name).toContain(r.date === undefined ? 'date not recorded' : `recorded ${r.date.slice(0, 10)}`)
      expect(section, suite.name).toContain(r.node === undefined ? 'Node not recorded' : `Node ${r.node}`)
      expect(section, suite.name).toContain(r.cpus === undefined ? 'cpus not recorded' : `${r.cpus} cpus`)
      if (r.date === undefined || r.node === undefined || r.cpus === undefined) lacking++
    }
    // Some results files record no core count: their lines say so rather than invent one.
    expect(lacking).toBeGreaterThan(0)
  })
})
