import { QuarryError, describe } from '../errors.js'
import { dotAt, norm } from '../metric/kernels.js'
import type { Metric } from '../metric/metric.js'

/**
 * Turns a caller's vector into a Float32Array of the index's dimension, rejecting wrong lengths,
 * non-numbers, NaN and Infinity, and (for cosine) the zero vector, which has no direction.
 * Writes into `into` when given (a reused buffer: allocating a typed array per call costs more than the copy).
 */
export function toVector(value: unknown, dimensions: number, metric: Metric, path: string, into?: Float32Array): Float32Array {
  const out = checkedCopy(value, dimensions, path, into ?? new Float32Array(dimensions))
  if (metric === 'cosine') checkLength(norm(out), path)
  return out
}

/**
 * {@link toVector} for a query: a Float32Array as it is, anything else into `buffers.input`; for
 * cosine, scaled to unit length into `buffers.unit`. A Float32Array's sum of squares is computed
 * once: it is the finiteness check and, for cosine, the squared length.
 */
export function toQueryVector(value: unknown, dimensions: number, metric: Metric, path: string, buffers: VectorBuffers): Float32Array {
  if (value instanceof Float32Array) {
    // Read where it is (a search is synchronous and keeps nothing): no copy.
    checkDimensions(value, dimensions, path)
    const squares = finiteSquares(value, path)
    return metric === 'cosine' ? unitQuery(value, Math.sqrt(squares), path, buffers.unit) : value
  }
  const out = checkedCopy(value, dimensions, path, buffers.input)
  return metric === 'cosine' ? unitQuery(out, norm(out), path, buffers.unit) : out
}

/** A cosine query at unit length into `out`, its length `n` checked first. */
function unitQuery(vector: Float32Array, n: number, path: string, out: Float32Array): Float32Array {
  checkLength(n, path)
  return normalized(vector, out, n)
}

/** The caller's vector as float32, copied into `out`, or the error saying which element is wrong. */
function checkedCopy(value: unknown, dimensions: number, path: string, out: Float32Array): Float32Array {
  if (!Array.isArray(value) && !(value instanceof Float32Array) && !(value instanceof Float64Array)) {
    throw new QuarryError('INVALID_VECTOR', `${path} must be an array of ${dimensions} numbers or a Float32Array; received ${describe(value)}.`, { path })
  }
  const source = value as ArrayLike<unknown>
  checkDimensions(source, dimensions, path)
  if (value instanceof Float32Array) {
    finiteSquares(value, path)
    out.set(value)
    return out
  }
  for (let i = 0; i < dimensions; i++) {
    const x = source[i]
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new QuarryError('INVALID_VECTOR', `${path}[${i}] must be a finite number; received ${describe(x)}.`, { path: `${path}[${i}]` })
    }
    const f = Math.fround(x)
    if (!Number.isFinite(f)) {
      throw new QuarryError('INVALID_VECTOR', `${path}[${i}] = ${x} overflows float32; scale the vector down.`, { path: `${path}[${i}]` })
    }
    out[i] = f
  }
  return out
}

function checkDimensions(source: ArrayLike<unknown>, dimensions: number, path: string): void {
  if (source.length !== dimensions) {
    throw new QuarryError('DIMENSION_MISMATCH', `${path} has ${source.length} dimensions but the index has ${dimensions}; embed with the model the index was created for.`, {
      path,
    })
  }
}

/**
 * The sum of squares of a float32 vector, or the error naming its first NaN or infinite element.
 * A sum of float32 squares cannot overflow a float64, so it is finite exactly when every element
 * is: one unrolled pass (the same one `norm` makes, so its square root is the vector's length).
 */
function finiteSquares(v: Float32Array, path: string): number {
  const squares = dotAt(v, v, 0, v.length)
  if (!Number.isFinite(squares)) throw notFinite(v, path)
  return squares
}

/** The error for the first element of `v` that is NaN or infinite. */
function notFinite(v: Float32Array, path: string): QuarryError {
  const i = v.findIndex((x) => !Number.isFinite(x))
  return new QuarryError('INVALID_VECTOR', `${path}[${i}] must be a finite number; received ${describe(v[i])}.`, { path: `${path}[${i}]` })
}

/** Fails on a length that gives a vector no cosine direction: zero, or too small for float32's 1/length. */
function checkLength(n: number, path: string): void {
  if (n === 0) {
    throw new QuarryError('INVALID_VECTOR', `${path} is all zeros, which has no cosine similarity to anything; give a non-zero vector or use metric 'dot' or 'l2'.`, {
      path,
    })
  }
  // The store keeps 1/‖v‖ as float32: below ~2.9e-39 it overflows and every score would be -Infinity.
  if (!Number.isFinite(Math.fround(1 / n))) {
    throw new QuarryError('INVALID_VECTOR', `${path} has length ${n.toExponential(2)}, too close to zero for float32 cosine (1/length overflows); scale it up — cosine ignores length.`, {
      path,
    })
  }
}

/** The vector scaled to unit length (cosine queries and graph inserts), into `out` or a new array; `n` is its length when known. */
export function normalized(vector: Float32Array, out: Float32Array = new Float32Array(vector.length), n: number = norm(vector)): Float32Array {
  for (let i = 0; i < vector.length; i++) out[i] = (vector[i] as number) / n
  return out
}

/** Reused buffers for the vector being added or searched, as given and at unit length (all work is synchronous). */
export interface VectorBuffers {
  readonly input: Float32Array
  readonly unit: Float32Array
}
