import { defaultServerConditions } from 'vite'
import { defineConfig } from 'vitest/config'

// @quarry/* resolve to their TypeScript sources in the workspace: their exports list this
// condition first (consumers of the published packages get dist/). tsconfig.base.json and
// packages/adapters/bin/sources.mjs use the same one.
const SOURCE_CONDITION = 'quarry-source'

export default defineConfig({
  // Tests run in Vite's server (ssr) environment.
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
  test: {
    include: ['test/**/*.test.ts'],
    // Property tests build real HNSW graphs; give them room on a shared 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
})
