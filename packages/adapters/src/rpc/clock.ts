import { isoDatetimeMs } from '@quarry/core'
/** Where adapters read the time; pass a fixed or stepping clock for reproducible timestamps. */
export type Clock = () => Date

export const systemClock: Clock = () => new Date()

/** RFC 3339 in UTC with a `Z`, as proto3 JSON writes a Timestamp. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString()
}

/** A clock that starts at `start` and moves `stepMs` forward on every read (for golden tests). */
export function steppingClock(start: string, stepMs = 1000): Clock {
  let t = Date.parse(start) - stepMs
  return () => {
    t += stepMs
    return new Date(t)
  }
}

/**
 * RFC 3339 text as Google's JSON writes a Timestamp: "2024-05-01T12:00:00Z", up to 9 fraction
 * digits, `Z` or an offset. The shape only: {@link parseRfc3339} also checks that it names a real
 * instant.
 */
export const RFC3339_SHAPE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/

/**
 * The instant (epoch milliseconds) RFC 3339 text names, or undefined when it names none. Each
 * field must lie in its range as protobuf's JSON parser checks a Timestamp (month 1–12, a day its
 * month has, hour 0–23, minute and second 0–59: no "24:00", no leap second; an offset's hours
 * 0–23, its minutes 0–59): Date.parse alone rolls "2030-02-30" forward to March 2 and
 * "2030-01-01T24:00:00Z" to the next day.
 */
export function parseRfc3339(text: string): number | undefined {
  // RFC 3339 is a profile of ISO 8601 (which writes T and Z in capitals): core's reader checks the rest.
  return RFC3339_SHAPE.test(text) ? isoDatetimeMs(text.toUpperCase()) : undefined
}
