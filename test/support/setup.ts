import fc from 'fast-check'

// fast-check prints the seed of any failure; FC_SEED=<seed> replays it (and FC_RUNS scales runs).
const seed = process.env.FC_SEED
const runs = process.env.FC_RUNS
fc.configureGlobal({
  ...(seed ? { seed: Number(seed) } : {}),
  ...(runs ? { numRuns: Number(runs) } : {}),
})
