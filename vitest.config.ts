import { availableParallelism } from 'node:os'
import { defaultServerConditions } from 'vite'
import { configDefaults, defineConfig } from 'vitest/config'

// @quarry/* resolve to their TypeScript sources in the workspace: their exports list this
// condition first (consumers of the published packages get dist/). tsconfig.base.json and
// packages/adapters/bin/sources.mjs use the same one.
const SOURCE_CONDITION = 'quarry-source'

// Two tiers (docs/contributing.md#tests). `pnpm test:quick` sets QUARRY_TEST_TIER=quick: unit,
// property, model and contract tests without the folders that start servers, browsers, child
// processes under faults or a package install, and with property runs scaled by FC_RUNS=0.25
// (test/support/runs.ts). The exhaustive and 10 MB cases inside quick files skip through
// test/support/tier.ts. `pnpm test` runs everything.
const QUICK = process.env.QUARRY_TEST_TIER === 'quick'
const QUICK_EXCLUDE = [
  'test/http/**',
  'test/faults/**',
  'test/package/**',
  'test/docs/**',
  'test/browser/**',
  // Spawns the `quarry` command for every case.
  'test/unit/cli-usage.test.ts',
]
if (QUICK && process.env.FC_RUNS === undefined) process.env.FC_RUNS = '0.25'
// The quick tier shares each worker's modules between its files (isolate: false): importing the
// sources anew for each file was a third of the tier's time. These files change what a process
// has loaded or started, so they still get a fresh module graph each: vi.mock of node:fs
// (persist-commit), QUARRY_HNSW read at @quarry/hnsw's first require (snapshot-fuzz-wasm), the
// import worker's first start (import-worker); or measure the process's memory, which what an
// earlier file left running would move (value-index-memory). The full tier isolates every file.
const QUICK_ISOLATED = ['test/unit/persist-commit.test.ts', 'test/property/snapshot-fuzz-wasm.test.ts', 'test/unit/import-worker.test.ts', 'test/unit/value-index-memory.test.ts']

export default defineConfig({
  // Tests run in Vite's server (ssr) environment.
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
  test: {
    // (Each quick project names its own files: a project extending this config adds to its lists.)
    ...(QUICK ? {} : { include: ['test/**/*.test.ts'] }),
    // Every core (vitest's default leaves one free, which on 2 cores runs the files one by one):
    // tests take their deadlines from what they measure, so a busy neighbour file slows them, it
    // does not fail them.
    maxWorkers: availableParallelism(),
    ...(QUICK
      ? {
          projects: [
            { extends: true, test: { name: 'quick', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...QUICK_EXCLUDE, ...QUICK_ISOLATED], isolate: false } },
            { extends: true, test: { name: 'quick-isolated', include: QUICK_ISOLATED } },
          ],
        }
      : {}),
    // Property tests build real HNSW graphs; give them room on a shared 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
})
