import { describe, it } from 'vitest'

/**
 * The test tier (`QUARRY_TEST_TIER`, set by `pnpm test:quick`; vitest.config.ts reads the same
 * variable to leave out the slow folders). `full.it` / `full.describe` mark the exhaustive and
 * 10 MB cases inside otherwise quick files: they run in the full suite and skip in the quick one.
 */
export const QUICK = process.env.QUARRY_TEST_TIER === 'quick'

export const full: { readonly it: ReturnType<typeof it.skipIf>; readonly describe: ReturnType<typeof describe.skipIf> } = {
  it: it.skipIf(QUICK),
  describe: describe.skipIf(QUICK),
}
