import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { QuarryError, WriteAheadLog, crc32 } from '@quarry/core'
import { runs } from '../support/runs.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-wal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const fresh = (): string => join(dir, `wal-${n++}.log`)

function written(path: string, payloads: readonly string[]): number[] {
  const { log } = WriteAheadLog.open(path)
  const ends: number[] = []
  for (const p of payloads) {
    log.append(Buffer.from(p))
    ends.push(log.bytes)
  }
  log.close()
  return ends
}

const reopen = (path: string) => {
  const { log, recovered } = WriteAheadLog.open(path)
  log.close()
  return { records: recovered.records.map((r) => r.toString()), dropped: recovered.droppedBytes }
}

describe('the write-ahead log', () => {
  it('computes CRC-32 as zip does', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926)
    expect(crc32(Buffer.alloc(0))).toBe(0)
  })

  it('gives back every record in order after a reopen, and appends after them', () => {
    const path = fresh()
    written(path, ['a', 'bb', '{"k":"x"}'])
    written(path, ['d'])
    expect(reopen(path)).toEqual({ records: ['a', 'bb', '{"k":"x"}', 'd'], dropped: 0 })
  })

  it('drops a torn last record at any cut, keeping every whole record before it', () => {
    const payloads = ['first record', 'second', 'third and last']
    const base = fresh()
    const ends = written(base, payloads)
    const full = readFileSync(base)
    for (let cut = 0; cut < full.length; cut++) {
      const path = fresh()
      writeFileSync(path, full.subarray(0, cut))
      const whole = ends.filter((e) => e <= cut).length
      expect(reopen(path).records, `cut at ${cut}`).toEqual(payloads.slice(0, whole))
      // Truncated to the last whole record: a second open finds nothing to drop.
      expect(reopen(path).dropped).toBe(0)
    }
  })

  it('drops a last record whose bytes fail the checksum, and zeros the file system left at the end', () => {
    const path = fresh()
    const ends = written(path, ['kept', 'flipped'])
    const bytes = readFileSync(path)
    bytes[(ends[1] as number) - 1] = (bytes[(ends[1] as number) - 1] as number) ^ 0xff
    writeFileSync(path, bytes)
    appendFileSync(path, Buffer.alloc(64))
    expect(reopen(path).records).toEqual(['kept'])
  })

  it('refuses a bad record followed by good ones, and a file that is not a log, as INVALID_SNAPSHOT', () => {
    const path = fresh()
    written(path, ['one', 'two', 'three'])
    const bytes = readFileSync(path)
    bytes[8 + 12] = (bytes[8 + 12] as number) ^ 0x01 // the first payload byte
    writeFileSync(path, bytes)
    expect(() => WriteAheadLog.open(path)).toThrow(QuarryError)
    expect(() => WriteAheadLog.open(path)).toThrow(/fails its checksum and is followed by others/)
    const other = fresh()
    writeFileSync(other, '{"not":"a log"}')
    expect(() => WriteAheadLog.open(other)).toThrow(/does not start with the log header/)
    // A damaged length is not taken for a torn tail (which would drop the good records after it).
    const lengthHit = fresh()
    written(lengthHit, ['one', 'two', 'three'])
    const hit = readFileSync(lengthHit)
    hit[8] = 0xff
    writeFileSync(lengthHit, hit)
    expect(() => WriteAheadLog.open(lengthHit)).toThrow(/record header at byte 8 is damaged/)
  })

  it('never returns a record that was not written whole, whatever single byte is changed (property)', () => {
    const payloads = ['alpha', 'beta', 'gamma', 'delta']
    const base = fresh()
    written(base, payloads)
    const full = readFileSync(base)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: full.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const path = fresh()
        const bytes = Buffer.from(full)
        bytes[at] = (bytes[at] as number) ^ xor
        writeFileSync(path, bytes)
        try {
          const { records } = reopen(path)
          // What comes back is what was written, or all of it but a last record that was hit.
          expect(payloads.slice(0, records.length)).toEqual(records)
          expect(records.length).toBeGreaterThanOrEqual(payloads.length - 1)
        } catch (error) {
          expect(error).toBeInstanceOf(QuarryError)
          expect((error as QuarryError).code).toBe('INVALID_SNAPSHOT')
        }
      }),
      { numRuns: runs(300) },
    )
  })

  it('shares one fsync between concurrent syncs (group commit) and resolves each once its records are on disk', async () => {
    const path = fresh()
    const { log } = WriteAheadLog.open(path)
    const waits: Promise<void>[] = []
    for (let i = 0; i < 100; i++) {
      log.append(Buffer.from(`record ${i}`))
      waits.push(log.sync())
    }
    await Promise.all(waits)
    await log.sync()
    log.close()
    expect(reopen(path).records).toHaveLength(100)
    expect(statSync(path).size).toBe(log.bytes)
  })

  it('keeps what was synced when the file is cut back mid-record after a crash', () => {
    const path = fresh()
    const ends = written(path, ['a', 'b'])
    truncateSync(path, (ends[1] as number) - 1)
    expect(reopen(path).records).toEqual(['a'])
  })
})
