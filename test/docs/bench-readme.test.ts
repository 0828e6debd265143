import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SUITES, renderBenchReadme } from '../../bench/readme.js'
import { ROOT, read } from './markdown.js'

/** bench/README.md is generated from bench/results/*.json, so it says only what they hold. */
const RESULTS = join(ROOT, 'bench', 'results')

describe('bench/README.md', () => {
  it('is what `pnpm bench:readme` makes of the committed results (run it after a bench run)', () => {
    expect(read('bench/README.md')).toBe(renderBenchReadme(RESULTS))
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

  it('says "not recorded" where a results file lacks the date or the machine', () => {
    // durability.json records neither; its line must say so rather than invent them.
    const section = read('bench/README.md').split('\n## durability\n')[1] ?? ''
    expect(section).toContain('date not recorded; Node not recorded, cpus not recorded')
  })
})
