// `pnpm bench [suite ...] [--quick]`: runs benchmark suites, each writing bench/results/<suite>.json
// and a plot, and printing its tables. Side-by-side comparisons run in one process, interleaved;
// each suite of several runs in a process of its own (see below).
import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
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
import { writeResultPages } from './readme.js'

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
const chosen = names.length > 0 ? names : Object.keys(SUITES)
/** Set in the process that runs one suite for a run of several (it leaves the README to its parent). */
const CHILD = 'QUARRY_BENCH_SUITE_PROCESS'
const inChild = process.env[CHILD] !== undefined
for (const name of chosen) {
  const t = performance.now()
  if (!inChild) console.log(`\n### suite ${name}${quick ? ' (quick)' : ''}`)
  if (chosen.length === 1) await (SUITES[name] as (ctx: SuiteContext) => Promise<void>)(ctx)
  else {
    // A fresh process per suite, as JMH forks one per benchmark: a suite run after others would
    // otherwise inherit their heap (a load timed in it pays for collecting theirs) and the type
    // feedback of code they shared (a call site that has seen many functions stops inlining).
    const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), name, ...(quick ? ['--quick'] : [])], { stdio: 'inherit', env: { ...process.env, [CHILD]: '1' } })
    if (child.status !== 0) {
      console.error(`suite ${name} failed (${child.status === null ? `signal ${child.signal}` : `exit code ${child.status}`}); the suites after it did not run`)
      process.exit(1)
    }
  }
  if (!inChild) console.log(`\n### suite ${name} done in ${((performance.now() - t) / 1000).toFixed(0)} s; results in ${resultsDir}`)
}
// The README shows the committed (full) results; quick runs write elsewhere and leave it alone.
if (!quick && !inChild) writeResultPages(resultsDir)
