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

export default defineConfig({
  // Tests run in Vite's server (ssr) environment.
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
  test: {
    include: ['test/**/*.test.ts'],
    // Every core (vitest's default leaves one free, which on 2 cores runs the files one by one):
    // tests take their deadlines from what they measure, so a busy neighbour file slows them, it
    // does not fail them.
    maxWorkers: availableParallelism(),
    ...(QUICK ? { exclude: [...configDefaults.exclude, ...QUICK_EXCLUDE] } : {}),
    // Property tests build real HNSW graphs; give them room on a shared 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
})
