import { QuarryError, describe } from '../errors.js'
import { norm } from '../metric/kernels.js'
import type { Metric } from '../metric/metric.js'

/**
 * Turns a caller's vector into a Float32Array of the index's dimension, rejecting wrong lengths,
 * non-numbers, NaN and Infinity, and (for cosine) the zero vector, which has no direction.
 * Writes into `into` when given (a reused buffer: allocating a typed array costs about 1 µs).
 */
export function toVector(value: unknown, dimensions: number, metric: Metric, path: string, into?: Float32Array): Float32Array {
  if (!Array.isArray(value) && !(value instanceof Float32Array) && !(value instanceof Float64Array)) {
    throw new QuarryError('INVALID_VECTOR', `${path} must be an array of ${dimensions} numbers or a Float32Array; received ${describe(value)}.`, { path })
  }
  const source = value as ArrayLike<unknown>
  if (source.length !== dimensions) {
    throw new QuarryError('DIMENSION_MISMATCH', `${path} has ${source.length} dimensions but the index has ${dimensions}; embed with the model the index was created for.`, {
      path,
    })
  }
  if (value instanceof Float32Array) {
    // Fast path: already float32, only finiteness to check.
    const out = into ?? new Float32Array(dimensions)
    out.set(value)
    for (let i = 0; i < dimensions; i++) {
      if (!Number.isFinite(out[i] as number)) {
        throw new QuarryError('INVALID_VECTOR', `${path}[${i}] must be a finite number; received ${describe(out[i])}.`, { path: `${path}[${i}]` })
      }
    }
    return checkDirection(out, metric, path)
  }
  const out = into ?? new Float32Array(dimensions)
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
  return checkDirection(out, metric, path)
}

function checkDirection(out: Float32Array, metric: Metric, path: string): Float32Array {
  if (metric !== 'cosine') return out
  const n = norm(out)
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
  return out
}

/** The vector scaled to unit length (cosine queries and graph inserts), into `out` or a new array. */
export function normalized(vector: Float32Array, out: Float32Array = new Float32Array(vector.length)): Float32Array {
  const n = norm(vector)
  for (let i = 0; i < vector.length; i++) out[i] = (vector[i] as number) / n
  return out
}

/** Reused buffers for the vector being added or searched, as given and at unit length (all work is synchronous). */
export interface VectorBuffers {
  readonly input: Float32Array
  readonly unit: Float32Array
}
