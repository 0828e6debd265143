import { describe, expect, it } from 'vitest'
import { MAX_PARTS, parseMultipart } from '../../packages/adapters/src/http/multipart.js'

/** http/multipart.ts: an upload's body split on its boundary, at most MAX_PARTS parts. */
describe('parseMultipart', () => {
  const body = (n: number): Buffer => Buffer.from(`${Array.from({ length: n }, (_, i) => `--b\r\nContent-Disposition: form-data; name="p${i}"\r\n\r\nv${i}\r\n`).join('')}--b--\r\n`)
  it(`takes up to ${MAX_PARTS} parts, their names and bytes, and refuses one more`, () => {
    const parts = parseMultipart(body(MAX_PARTS), 'multipart/form-data; boundary=b')
    expect(parts?.map((p) => [p.name, p.body.toString()])).toEqual(Array.from({ length: MAX_PARTS }, (_, i) => [`p${i}`, `v${i}`]))
    expect(parseMultipart(body(MAX_PARTS + 1), 'multipart/form-data; boundary=b')).toBeUndefined()
  })
})
