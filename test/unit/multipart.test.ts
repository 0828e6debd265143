import { describe, expect, it } from 'vitest'
import { buildRequest } from '../../packages/adapters/src/http/request.js'
import { MAX_BOUNDARY, MAX_PARTS, parseMultipart } from '../../packages/adapters/src/http/multipart.js'

/** http/multipart.ts: an upload's body split on its boundary, at most MAX_PARTS parts. */
describe('parseMultipart', () => {
  const body = (n: number): Buffer => Buffer.from(`${Array.from({ length: n }, (_, i) => `--b\r\nContent-Disposition: form-data; name="p${i}"\r\n\r\nv${i}\r\n`).join('')}--b--\r\n`)
  it(`takes up to ${MAX_PARTS} parts, their names and bytes, and refuses one more`, () => {
    const parts = parseMultipart(body(MAX_PARTS), 'multipart/form-data; boundary=b')
    expect(parts?.map((p) => [p.name, p.body.toString()])).toEqual(Array.from({ length: MAX_PARTS }, (_, i) => [`p${i}`, `v${i}`]))
    expect(parseMultipart(body(MAX_PARTS + 1), 'multipart/form-data; boundary=b')).toBeUndefined()
  })

  it(`takes a boundary of up to ${MAX_BOUNDARY} characters (RFC 2046) and refuses a longer one before searching for it`, () => {
    const of = (boundary: string): Buffer => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\nhello\r\n--${boundary}--\r\n`)
    const longest = 'a'.repeat(MAX_BOUNDARY)
    expect(parseMultipart(of(longest), `multipart/form-data; boundary=${longest}`)?.map((p) => p.body.toString())).toEqual(['{}', 'hello'])
    const over = 'ab'.repeat(36)
    expect(parseMultipart(of(over), `multipart/form-data; boundary=${over}`)).toBeUndefined()
    // Over REST: a 400 naming the rule (a 12 KB boundary absent from a 32 MB body was searched for 30 s).
    const route = { multipart: true } as Parameters<typeof buildRequest>[0]
    let failure: unknown
    try {
      buildRequest(route, /x/.exec('x') as RegExpExecArray, undefined, of(over), `multipart/related; boundary="${over}"`)
    } catch (error) {
      failure = error
    }
    expect(failure).toMatchObject({ httpStatus: 400, status: { code: 3, message: 'The multipart boundary is 72 characters; RFC 2046 allows at most 70.' } })
  })
})
