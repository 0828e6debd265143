/**
 * A filter's `{ datetime }` text: an ISO 8601 date, or date and time, read the same on every host.
 * `Date.parse` reads "2024-01-01T00:00:00" in the machine's own zone (the same filter matched on
 * one host and not another) and takes forms ISO 8601 has not ("2024-1-1", "Mon, 01 Jan 2024").
 * Here a time without an offset is UTC, as Qdrant and Elasticsearch read it, and a date alone is
 * its midnight UTC, as `Date.parse` reads that one too:
 *
 *     2024-05-01   2024-05-01T09:30   2024-05-01T09:30:15.250   …T09:30:15Z   …T09:30:15+02:00
 *
 * with years of four digits, or six with a sign (`+275760-09-13`, JavaScript's extended years).
 */
const ISO_8601 = /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/

/** The largest distance from the epoch a JavaScript Date holds, in ms. */
const MAX_DATE_MS = 8.64e15

/** Epoch milliseconds of an ISO 8601 datetime text (fractions past the millisecond dropped), or undefined if it is none or names no real instant (February 30, 24:00, an hour 25). */
export function isoDatetimeMs(text: string): number | undefined {
  const m = ISO_8601.exec(text)
  if (!m) return undefined
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone = 'Z'] = m as unknown as readonly string[]
  // ISO 8601 has no year minus zero.
  if (y === '-000000') return undefined
  const [year, month, day, hour, minute, second] = [Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s)]
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return undefined
  let offset = 0
  if (zone !== 'Z') {
    const [zh, zm] = [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))]
    if (zh > 23 || zm > 59) return undefined
    offset = (zone[0] === '-' ? -1 : 1) * (zh * 60 + zm)
  }
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute - offset, second, Number(fraction.padEnd(3, '0').slice(0, 3)))
  const ms = at.getTime()
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? ms : undefined
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}
