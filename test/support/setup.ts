import fc from 'fast-check'
import { runs } from './runs.js'

// fast-check prints the seed of any failure; FC_SEED=<seed> replays it. FC_RUNS is a factor on
// every property's run count (runs.ts): here it scales fast-check's default of 100.
const seed = process.env.FC_SEED
fc.configureGlobal({
  ...(seed ? { seed: Number(seed) } : {}),
  numRuns: runs(100),
})
