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
