import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { createIndex } from '@quarry/core'
import { isoDatetimeMs } from '../../packages/core/src/filter/datetime.js'
import { runs } from '../support/runs.js'

/**
 * A filter's `{ datetime }` (docs/filters.md): ISO 8601, a time without an offset read as UTC, on
 * every host. `Date.parse` read "2024-01-01T00:00:00" in the machine's zone (a filter matched under
 * TZ=UTC and not under TZ=America/New_York) and took forms ISO 8601 has not.
 */
describe('datetime values of a filter', () => {
  const zone = process.env['TZ']
  afterEach(() => {
    if (zone === undefined) delete process.env['TZ']
    else process.env['TZ'] = zone
  })

  it('reads every form a Date writes, and the same instant without the Z, with an offset, or as a date alone', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }), (date) => {
        const iso = date.toISOString()
        expect(isoDatetimeMs(iso)).toBe(date.getTime())
        expect(isoDatetimeMs(iso.slice(0, -1))).toBe(date.getTime())
      }),
      { numRuns: runs(500) },
    )
    expect(isoDatetimeMs('2024-05-01')).toBe(Date.UTC(2024, 4, 1))
    expect(isoDatetimeMs('2024-05-01T09:30')).toBe(Date.UTC(2024, 4, 1, 9, 30))
    expect(isoDatetimeMs('2024-05-01T09:30:15.2506789Z')).toBe(Date.UTC(2024, 4, 1, 9, 30, 15, 250))
    expect(isoDatetimeMs('2024-05-01T09:30:00+02:00')).toBe(Date.UTC(2024, 4, 1, 7, 30))
    expect(isoDatetimeMs('2024-05-01T00:30:00-05:45')).toBe(Date.UTC(2024, 4, 1, 6, 15))
    // Years below 100 are those years (Date.UTC would read 0024 as 1924).
    expect(isoDatetimeMs('0024-02-29')).toBe(new Date('0024-02-29T00:00:00Z').getTime())
    // The last instant a Date holds (toISOString's own form): the message's advice works for it.
    expect(isoDatetimeMs('+275760-09-13T00:00:00.000Z')).toBe(8.64e15)
  })

  it('refuses what names no real instant or is not ISO 8601', () => {
    for (const bad of ['2024-1-1', 'Mon, 01 Jan 2024 00:00:00 GMT', '2023-02-30', '2100-02-29', '2024-13-01', '2024-01-01T24:00', '2024-01-01T23:60', '2024-01-01T00:00:60', '2024-01-01T00:00:00+24:00', '2024-01-01Z', '2024-01-01T00', '-000000-01-01', '+275760-09-13T00:00:00.001Z', ' 2024-01-01', '2024-01-01T00:00:00 Z', '']) {
      expect([bad, isoDatetimeMs(bad)]).toEqual([bad, undefined])
    }
  })

  it('matches the same records on every host, whatever its time zone', () => {
    const index = createIndex({ dimensions: 2, dense: 'exact' })
    index.add({ id: 'new-year', vector: [1, 0], metadata: { at: new Date('2024-01-01T00:00:00Z') } })
    index.add({ id: 'later', vector: [1, 0], metadata: { at: new Date('2024-01-01T03:00:00Z') } })
    const found = (datetime: string, op: 'eq' | 'gt' = 'eq') => index.search({ vector: [1, 0], filter: { op, field: 'at', value: { datetime } } }).hits.map((h) => h.id)
    for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
      process.env['TZ'] = tz
      expect([tz, found('2024-01-01T00:00:00'), found('2024-01-01'), found('2024-01-01T05:30:00+05:30'), found('2024-01-01T00:00', 'gt')]).toEqual([tz, ['new-year'], ['new-year'], ['new-year'], ['later']])
    }
    expect(() => found('2024-1-1')).toThrow(expect.objectContaining({ code: 'INVALID_QUERY', message: expect.stringContaining('filter.value: datetime must be an ISO 8601 date or date and time of a real instant') }))
  })
})
