/**
 * Distance kernels over contiguous Float32Array storage. Loops are unrolled by four: V8 keeps the
 * four partial sums in registers, which is about twice as fast as the plain loop on 100-d vectors.
 * Sums are accumulated in float64 (JS numbers), so results do not depend on the scan order.
 */

/** Dot product of `a` (from 0) and `b[offset .. offset + dim)`. */
export function dotAt(a: Float32Array, b: Float32Array, offset: number, dim: number): number {
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let i = 0
  const end4 = dim - (dim % 4)
  for (; i < end4; i += 4) {
    s0 += (a[i] as number) * (b[offset + i] as number)
    s1 += (a[i + 1] as number) * (b[offset + i + 1] as number)
    s2 += (a[i + 2] as number) * (b[offset + i + 2] as number)
    s3 += (a[i + 3] as number) * (b[offset + i + 3] as number)
  }
  for (; i < dim; i++) s0 += (a[i] as number) * (b[offset + i] as number)
  return s0 + s1 + s2 + s3
}

/** Squared euclidean distance of `a` (from 0) and `b[offset .. offset + dim)`. */
export function l2SquaredAt(a: Float32Array, b: Float32Array, offset: number, dim: number): number {
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let i = 0
  const end4 = dim - (dim % 4)
  for (; i < end4; i += 4) {
    const d0 = (a[i] as number) - (b[offset + i] as number)
    const d1 = (a[i + 1] as number) - (b[offset + i + 1] as number)
    const d2 = (a[i + 2] as number) - (b[offset + i + 2] as number)
    const d3 = (a[i + 3] as number) - (b[offset + i + 3] as number)
    s0 += d0 * d0
    s1 += d1 * d1
    s2 += d2 * d2
    s3 += d3 * d3
  }
  for (; i < dim; i++) {
    const d = (a[i] as number) - (b[offset + i] as number)
    s0 += d * d
  }
  return s0 + s1 + s2 + s3
}

/** Euclidean norm of a whole vector. */
export function norm(v: Float32Array): number {
  return Math.sqrt(dotAt(v, v, 0, v.length))
}
