import { execFileSync } from 'node:child_process'
import { statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildDist, DIST_CORE } from '../lib/dist.js'
import { median } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

interface Round {
  /** RSS once @quarry/core is imported, before GloVe: the floor the first use adds to. */
  importedMB: number
  /** createGloveEmbedder() to the first embedding. */
  firstUseMs: number
  /** The process's peak RSS (getrusage), after the first embedding. */
  peakMB: number
}

/** One fresh process: imports the bundled core, then creates the embedder and embeds one text. */
function round(vocabulary: number | undefined): Round {
  const options = vocabulary === undefined ? '' : JSON.stringify({ vocabulary })
  const script = [
    `const { createGloveEmbedder } = await import(${JSON.stringify(pathToFileURL(DIST_CORE).href)})`,
    'const importedMB = process.memoryUsage().rss / 1e6',
    'const t = performance.now()',
    `await createGloveEmbedder(${options}).embed(['how the first five minutes with a retrieval engine go'])`,
    'const firstUseMs = performance.now() - t',
    'console.log(JSON.stringify({ importedMB, firstUseMs, peakMB: (process.resourceUsage().maxRSS * 1024) / 1e6 }))',
  ].join('\n')
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim()) as Round
}

/**
 * GloVe's first use as an installed app meets it (issue 39: ≤ 1 s and ≤ 150 MB RSS): a fresh
 * `node` imports @quarry/core's bundle (built first, as `pnpm build` does), then times
 * `createGloveEmbedder()` to its first embedding and reads the process's peak RSS. The default
 * vocabulary (100,000 words) and all 341,479; rounds alternate, medians and worst reported.
 */
export async function runGloveLoad(ctx: SuiteContext): Promise<void> {
  buildDist('core')
  const { vectorsFile } = createRequire(join(ROOT, 'packages', 'core', 'package.json'))('@quarry/glove') as { vectorsFile: string }
  const rounds = ctx.quick ? 3 : 9
  const cases: { name: string; vocabulary: number | undefined; runs: Round[] }[] = [
    { name: 'default (100,000 words)', vocabulary: undefined, runs: [] },
    { name: 'all 341,479 words', vocabulary: 341_479, runs: [] },
  ]
  for (let r = 0; r < rounds; r++) for (const c of cases) c.runs.push(round(c.vocabulary))
  const rows = cases.map((c) => ({
    vocabulary: c.name,
    'first use ms (median)': median(c.runs.map((x) => x.firstUseMs)),
    'first use ms (worst)': Math.max(...c.runs.map((x) => x.firstUseMs)),
    'peak RSS MB (median)': median(c.runs.map((x) => x.peakMB)),
    'peak RSS MB (worst)': Math.max(...c.runs.map((x) => x.peakMB)),
    'RSS after import MB': median(c.runs.map((x) => x.importedMB)),
  }))
  const fileMB = statSync(vectorsFile).size / 1e6
  printTable(`GloVe first use in a fresh node (bundled @quarry/core; @quarry/glove file ${fileMB.toFixed(1)} MB), ${rounds} rounds`, rows)
  writeFileSync(
    join(ctx.resultsDir, 'glove-load.json'),
    `${JSON.stringify({ suite: 'glove-load', date: new Date().toISOString(), node: process.version, quick: ctx.quick, fileMB, rows, runs: Object.fromEntries(cases.map((c) => [c.name, c.runs])) }, null, 1)}\n`,
  )
}
