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

/**
 * `dotAt` of `a` with two rows at once (at `o` and `p`), written to `out[i]` and `out[j]`: each
 * sum is accumulated exactly as `dotAt` does (the same four partial sums in the same order, so the
 * same bits), while each component of `a` is read once for both rows — about 1.3× the speed of
 * two `dotAt` calls.
 */
export function dotAt2(a: Float32Array, b: Float32Array, o: number, p: number, dim: number, out: Float64Array, i: number, j: number): void {
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let t0 = 0
  let t1 = 0
  let t2 = 0
  let t3 = 0
  let k = 0
  const end4 = dim - (dim % 4)
  for (; k < end4; k += 4) {
    const a0 = a[k] as number
    const a1 = a[k + 1] as number
    const a2 = a[k + 2] as number
    const a3 = a[k + 3] as number
    s0 += a0 * (b[o + k] as number)
    s1 += a1 * (b[o + k + 1] as number)
    s2 += a2 * (b[o + k + 2] as number)
    s3 += a3 * (b[o + k + 3] as number)
    t0 += a0 * (b[p + k] as number)
    t1 += a1 * (b[p + k + 1] as number)
    t2 += a2 * (b[p + k + 2] as number)
    t3 += a3 * (b[p + k + 3] as number)
  }
  for (; k < dim; k++) {
    s0 += (a[k] as number) * (b[o + k] as number)
    t0 += (a[k] as number) * (b[p + k] as number)
  }
  out[i] = s0 + s1 + s2 + s3
  out[j] = t0 + t1 + t2 + t3
}

/** `l2SquaredAt` of `a` with two rows at once, as {@link dotAt2} does for `dotAt` (the same bits as `l2SquaredAt`). */
export function l2SquaredAt2(a: Float32Array, b: Float32Array, o: number, p: number, dim: number, out: Float64Array, i: number, j: number): void {
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let t0 = 0
  let t1 = 0
  let t2 = 0
  let t3 = 0
  let k = 0
  const end4 = dim - (dim % 4)
  for (; k < end4; k += 4) {
    const a0 = a[k] as number
    const a1 = a[k + 1] as number
    const a2 = a[k + 2] as number
    const a3 = a[k + 3] as number
    const d0 = a0 - (b[o + k] as number)
    const d1 = a1 - (b[o + k + 1] as number)
    const d2 = a2 - (b[o + k + 2] as number)
    const d3 = a3 - (b[o + k + 3] as number)
    s0 += d0 * d0
    s1 += d1 * d1
    s2 += d2 * d2
    s3 += d3 * d3
    const e0 = a0 - (b[p + k] as number)
    const e1 = a1 - (b[p + k + 1] as number)
    const e2 = a2 - (b[p + k + 2] as number)
    const e3 = a3 - (b[p + k + 3] as number)
    t0 += e0 * e0
    t1 += e1 * e1
    t2 += e2 * e2
    t3 += e3 * e3
  }
  for (; k < dim; k++) {
    const d = (a[k] as number) - (b[o + k] as number)
    s0 += d * d
    const e = (a[k] as number) - (b[p + k] as number)
    t0 += e * e
  }
  out[i] = s0 + s1 + s2 + s3
  out[j] = t0 + t1 + t2 + t3
}

/** Euclidean norm of a whole vector. */
export function norm(v: Float32Array): number {
  return Math.sqrt(dotAt(v, v, 0, v.length))
}

/*
 * The keys of the three metrics (smaller is closer; see metric.ts) and the scan that writes them.
 * These functions use nothing but their arguments and each other, so that the scan pool's workers
 * run this very source text (dense/scan-pool.ts builds them from `Function.prototype.toString`):
 * one copy of the arithmetic, and keys computed on any thread are bit-identical.
 */

/** 1 − cos(q, v) for a unit query `q` and a stored row with 1/‖v‖ = `invNorm`. */
export function cosineKeyAt(q: Float32Array, data: Float32Array, offset: number, dim: number, invNorm: number): number {
  return 1 - dotAt(q, data, offset, dim) * invNorm
}

/** −(q · v). */
export function dotKeyAt(q: Float32Array, data: Float32Array, offset: number, dim: number): number {
  return -dotAt(q, data, offset, dim)
}

/** ‖q − v‖². */
export function l2KeyAt(q: Float32Array, data: Float32Array, offset: number, dim: number): number {
  return l2SquaredAt(q, data, offset, dim)
}

/** The key of `metric` (0 cosine, 1 dot, 2 l2: see `metricKind`) for the row at `offset`. */
export function keyAt(kind: number, q: Float32Array, data: Float32Array, offset: number, dim: number, invNorm: number): number {
  return kind === 0 ? cosineKeyAt(q, data, offset, dim, invNorm) : kind === 1 ? dotKeyAt(q, data, offset, dim) : l2KeyAt(q, data, offset, dim)
}

/** The number `keyAt` takes for a metric's name: direct calls, which the JIT inlines wherever the scan runs. */
export function metricKind(metric: string): number {
  return metric === 'cosine' ? 0 : metric === 'dot' ? 1 : 2
}

/**
 * Writes the key of rows `from .. to-1` into `out[from .. to-1]`: row `i` itself, or row
 * `labels[i]` when `labels` is given. `metric` is 'cosine', 'dot' or 'l2'.
 */
export function scanKeys(
  metric: string,
  q: Float32Array,
  data: Float32Array,
  invNorms: Float32Array,
  dim: number,
  labels: ArrayLike<number> | null,
  from: number,
  to: number,
  out: Float64Array,
): void {
  const kind = metricKind(metric)
  let i = from
  // Two rows at a time (the pair kernels give each row keyAt's bits), then the odd one out.
  for (; i + 1 < to; i += 2) {
    const r = labels === null ? i : (labels[i] as number)
    const s = labels === null ? i + 1 : (labels[i + 1] as number)
    if (kind === 2) l2SquaredAt2(q, data, r * dim, s * dim, dim, out, i, i + 1)
    else {
      dotAt2(q, data, r * dim, s * dim, dim, out, i, i + 1)
      // cosineKeyAt / dotKeyAt of the dot products.
      if (kind === 0) {
        out[i] = 1 - (out[i] as number) * (invNorms[r] as number)
        out[i + 1] = 1 - (out[i + 1] as number) * (invNorms[s] as number)
      } else {
        out[i] = -(out[i] as number)
        out[i + 1] = -(out[i + 1] as number)
      }
    }
  }
  for (; i < to; i++) {
    const row = labels === null ? i : (labels[i] as number)
    out[i] = keyAt(kind, q, data, row * dim, dim, invNorms[row] as number)
  }
}
