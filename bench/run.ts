// `pnpm bench [suite ...] [--quick]`: runs benchmark suites, each writing bench/results/<suite>.json
// and a plot, and printing its tables. Side-by-side comparisons run in one process, interleaved.
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runDense } from './suites/dense.js'
import { runDurability } from './suites/durability.js'
import { runEmbedQuality } from './suites/embed-quality.js'
import { runExact } from './suites/exact.js'
import { runFileLoad } from './suites/file-load.js'
import { runFiltered } from './suites/filtered.js'
import { runGloveLoad } from './suites/glove-load.js'
import { runHttp } from './suites/http.js'
import { runHybrid } from './suites/hybrid.js'
import { runMemory } from './suites/memory.js'
import { runPersist } from './suites/persist.js'
import { runPersistScale } from './suites/persist-scale.js'
import { runQuality } from './suites/quality.js'
import { runSemanticRetriever } from './suites/semantic-retriever.js'
import { runStartup } from './suites/startup.js'
import { runTextLimits } from './suites/text-limits.js'
import { runTextSpeed } from './suites/text-speed.js'
import { runVertexRag } from './suites/vertex-rag.js'
import { renderBenchReadme } from './readme.js'

export interface SuiteContext {
  readonly quick: boolean
  readonly resultsDir: string
  readonly cpus: number
}

const SUITES: Record<string, (ctx: SuiteContext) => Promise<void>> = {
  dense: runDense,
  filtered: runFiltered,
  quality: runQuality,
  'embed-quality': runEmbedQuality,
  'glove-load': runGloveLoad,
  'text-speed': runTextSpeed,
  'text-limits': runTextLimits,
  persist: runPersist,
  'persist-scale': runPersistScale,
  hybrid: runHybrid,
  exact: runExact,
  'semantic-retriever': runSemanticRetriever,
  'vertex-rag': runVertexRag,
  http: runHttp,
  durability: runDurability,
  'file-load': runFileLoad,
  memory: runMemory,
  startup: runStartup,
}

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const names = args.filter((a) => !a.startsWith('--'))
const unknown = names.filter((n) => !(n in SUITES))
if (unknown.length > 0) {
  console.error(`unknown suite(s): ${unknown.join(', ')}; available: ${Object.keys(SUITES).join(', ')}`)
  process.exit(2)
}
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), 'results', quick ? 'quick' : '')
mkdirSync(resultsDir, { recursive: true })
const ctx: SuiteContext = { quick, resultsDir, cpus: availableParallelism() }
for (const name of names.length > 0 ? names : Object.keys(SUITES)) {
  const t = performance.now()
  console.log(`\n### suite ${name}${quick ? ' (quick)' : ''}`)
  await (SUITES[name] as (ctx: SuiteContext) => Promise<void>)(ctx)
  console.log(`\n### suite ${name} done in ${((performance.now() - t) / 1000).toFixed(0)} s; results in ${resultsDir}`)
}
// The README shows the committed (full) results; quick runs write elsewhere and leave it alone.
if (!quick) writeFileSync(join(dirname(fileURLToPath(import.meta.url)), 'README.md'), renderBenchReadme(resultsDir))
