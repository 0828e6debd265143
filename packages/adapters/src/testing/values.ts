import fc from 'fast-check'
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../rpc/proto-json.js'

/*
 * Values the request arbitraries compare metadata with: a few common ones (so filters match
 * stored values now and then) and arbitrary ones (to fuzz), all within the requests' limits.
 */
const STRINGS = ['drama', 'scifi', 'poetry', 'a', 'b', '']

/** A metadata string: a common value or up to 12 arbitrary graphemes. */
export const stringValue: fc.Arbitrary<string> = fc.oneof({ arbitrary: fc.constantFrom(...STRINGS), weight: 3 }, { arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }), weight: 1 })

/** A finite number: small integers, years, and any finite float32 (a proto `float`). */
export const floatValue: fc.Arbitrary<number> = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.integer({ min: 1900, max: 2100 }), fc.float({ noNaN: true, noDefaultInfinity: true }))

/** A finite double. */
export const doubleValue: fc.Arbitrary<number> = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true }))

/** An integer within int64's safe range. */
export const integerValue: fc.Arbitrary<number> = fc.oneof(fc.integer({ min: -5, max: 2100 }), fc.maxSafeInteger())

/** An RFC 3339 timestamp within google.protobuf.Timestamp's range (years 1 to 9999), UTC. */
export const timestampValue: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.date({ min: new Date(Date.UTC(2000, 0, 1)), max: new Date(Date.UTC(2030, 0, 1)), noInvalidDate: true }), weight: 3 },
    { arbitrary: fc.date({ min: new Date(MIN_TIMESTAMP_MS), max: new Date(MAX_TIMESTAMP_MS), noInvalidDate: true }), weight: 1 },
  )
  .map((d) => d.toISOString())
