import fc from 'fast-check'
import { METRICS, type Metric } from '../metric/metric.js'
import { intOption, invalidOption } from './check.js'

/** The largest finite float32, about 3.4e38: Quarry stores vectors as float32. */
const FLOAT32_MAX = 3.4028234663852886e38
const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1

/** Options of {@link vectorArbitrary}. */
export interface VectorArbitraryOptions {
  /** Length of every vector, 1 to 65,536. */
  readonly dimensions: number
  /** The metric the vectors are for: `'cosine'` never yields the zero vector (it has no direction). @defaultValue 'cosine' */
  readonly metric?: Metric
  /** Smallest component (rounded to float32). @defaultValue -1 */
  readonly min?: number
  /** Largest component (rounded to float32). @defaultValue 1 */
  readonly max?: number
  /**
   * How components are drawn from [min, max]:
   * - `'float32'`: any float32, biased to edge cases (-0, subnormals, tiny magnitudes, the
   *   bounds), as fast-check's `fc.float`: for exactness checks of a store;
   * - `'uniform'`: spread evenly over the interval (2^24 steps), like real embeddings: for recall
   *   checks of an approximate index (edge-case vectors crowd around the axes, where every
   *   distance is a near-tie and recall says little);
   * - `'integer'`: integers (within ±2^31): equal distances become common, which exercises how a
   *   store breaks ties (Quarry: by id ascending).
   * @defaultValue 'float32'
   */
  readonly components?: 'float32' | 'uniform' | 'integer'
}

/** Steps of a uniform component: float32 has 24 bits of precision. */
const STEPS = 2 ** 24

/**
 * Vectors Quarry accepts for a metric: `dimensions` finite components in [min, max], drawn as
 * `components` says; for cosine never all zero, nor of a norm below about 2.9e-39 (see
 * `hasDirection`). Components are exactly representable in float32, so a float64 store and
 * Quarry's float32 storage see the same numbers.
 */
export function vectorArbitrary(options: VectorArbitraryOptions): fc.Arbitrary<number[]> {
  const dimensions = intOption(options.dimensions, 'dimensions', 1, 65_536)
  const metric = options.metric ?? 'cosine'
  if (!(METRICS as readonly string[]).includes(metric)) throw invalidOption('metric', `one of ${METRICS.join(', ')}`, metric)
  const min = Math.fround(bound(options.min, 'min', -1))
  const max = Math.fround(bound(options.max, 'max', 1))
  if (min > max) throw invalidOption('max', `at least min (${min})`, options.max)
  const kind = options.components ?? 'float32'
  if (kind !== 'float32' && kind !== 'uniform' && kind !== 'integer') throw invalidOption('components', "'float32', 'uniform' or 'integer'", kind)
  const integer = kind === 'integer'
  const lo = integer ? Math.ceil(min) : min
  const hi = integer ? Math.floor(max) : max
  if (integer && !(lo <= hi && lo >= INT32_MIN && hi <= INT32_MAX)) throw invalidOption('max', `such that [min, max] holds an integer within ±2^31 (min is ${min})`, options.max)
  if (metric === 'cosine' && lo === 0 && hi === 0) throw invalidOption('max', 'such that [min, max] holds a non-zero component: cosine needs a direction', options.max)
  const component =
    kind === 'integer'
      ? fc.integer({ min: lo, max: hi })
      : kind === 'uniform'
        ? fc.integer({ min: 0, max: STEPS }).map((i) => Math.fround(min + (max - min) * (i / STEPS)))
        : fc.float({ min, max, noNaN: true })
  const vector = fc.array(component, { minLength: dimensions, maxLength: dimensions })
  return metric === 'cosine' ? vector.filter(hasDirection) : vector
}

/**
 * Not zero, and not so close to zero that 1/‖v‖ overflows float32 (‖v‖ below about 2.9e-39, only
 * subnormal components): Quarry keeps 1/‖v‖ in float32 and refuses such a vector for cosine
 * (INVALID_VECTOR), as it refuses the zero vector.
 */
function hasDirection(v: readonly number[]): boolean {
  let squares = 0
  for (const x of v) squares += x * x
  return squares > 0 && Number.isFinite(Math.fround(1 / Math.sqrt(squares)))
}

function bound(value: number | undefined, path: string, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !(Math.abs(value) <= FLOAT32_MAX)) throw invalidOption(path, `a finite number within float32's range (|x| ≤ ${FLOAT32_MAX})`, value)
  return value
}
