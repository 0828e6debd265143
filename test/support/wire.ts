/** A protobuf varint: the bytes the wire format writes for a non-negative integer below 2^32. */
export function varint(n: number): Buffer {
  const out: number[] = []
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80)
    n >>>= 7
  }
  out.push(n)
  return Buffer.from(out)
}
