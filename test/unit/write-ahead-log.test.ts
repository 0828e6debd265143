import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { WriteAheadLog, crc32, readLog, type LogIdentity, type LogReading } from '@quarry/core'
import { portableCrc32 } from '../../packages/core/src/persist/log.js'
import { runs } from '../support/runs.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-wal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const fresh = (): string => join(dir, `wal-${n++}.log`)

/**
 * A log as a crash leaves it: `sealed` appended and synced (acknowledged), then `unsealed`
 * appended but never synced. Returns its bytes (read while it is open, as after a SIGKILL), its
 * identity and where each record ends.
 */
async function crashed(sealed: readonly string[], unsealed: readonly string[] = []): Promise<{ bytes: Buffer; identity: LogIdentity; ends: number[] }> {
  const path = fresh()
  const log = WriteAheadLog.create(path, 7)
  const ends: number[] = []
  for (const p of sealed) {
    log.append(Buffer.from(p))
    ends.push(log.bytes)
  }
  await log.sync()
  for (const p of unsealed) {
    log.append(Buffer.from(p))
    ends.push(log.bytes)
  }
  const bytes = readFileSync(path)
  log.close()
  return { bytes, identity: log.identity, ends }
}

function read(bytes: Uint8Array, identity: LogIdentity): LogReading {
  const path = fresh()
  writeFileSync(path, bytes)
  return readLog(path, identity)
}

const texts = (reading: LogReading): string[] => reading.records.map((r) => r.toString())

describe('the write-ahead log', () => {
  it('computes CRC-32 as zip does, natively or not, whole or a piece at a time', () => {
    for (const crc of [crc32, portableCrc32]) {
      expect(crc(Buffer.from('123456789'))).toBe(0xcbf43926)
      expect(crc(Buffer.alloc(0))).toBe(0)
      expect(crc(Buffer.from('56789'), crc(Buffer.from('1234')))).toBe(0xcbf43926)
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(300), (bytes, cut) => {
        const at = Math.min(cut, bytes.length)
        expect(crc32(bytes.subarray(at), crc32(bytes.subarray(0, at)))).toBe(portableCrc32(bytes))
      }),
      { numRuns: runs(200) },
    )
  })

  it('writes a record given in parts off the event loop as append writes it whole', async () => {
    const parts = [Buffer.from([0, 1, 2]), new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) % 251), Buffer.from('tail')]
    const whole = fresh()
    const sliced = fresh()
    const a = WriteAheadLog.create(whole, 9)
    const b = WriteAheadLog.create(sliced, 9)
    for (const log of [a, b]) log.append(Buffer.from('before'))
    a.append(Buffer.concat(parts))
    let turns = 0
    const counting = setInterval(() => turns++, 0)
    const going = b.appendInSlices(parts)
    // One append at a time: another waits for it.
    expect(() => b.append(Buffer.from('x'))).toThrow(/appendInSlices of this log is under way/)
    await going
    clearInterval(counting)
    for (const log of [a, b]) log.append(Buffer.from('after'))
    await Promise.all([a.sync(), b.sync()])
    a.close()
    b.close()
    const [ra, rb] = [readLog(whole, a.identity), readLog(sliced, b.identity)]
    if (!ra.ok || !rb.ok) throw new Error('a log was not read whole')
    // Buffers compared by Buffer.equals: a deep toEqual of megabytes takes seconds.
    expect(rb.records.map((r, i) => r.equals(ra.records[i] as Buffer))).toEqual([true, true, true])
    expect(rb.records[1]?.equals(Buffer.concat(parts))).toBe(true)
    expect(rb.records.map((r) => r.length)).toEqual([6, parts.reduce((n, p) => n + p.length, 0), 5])
    expect(rb.seal).toMatchObject({ records: 3, bytes: statSync(sliced).size })
    // Identities differ; everything after the header and seals is the same bytes.
    expect(readFileSync(sliced).subarray(64).equals(readFileSync(whole).subarray(64))).toBe(true)
    expect(turns).toBeGreaterThan(0)
  })

  it('gives back every record in order, its seal covering them, and appends after them when resumed', async () => {
    const path = fresh()
    const log = WriteAheadLog.create(path, 3)
    for (const p of ['a', 'bb', '{"k":"x"}']) log.append(Buffer.from(p))
    await log.sync()
    log.close()
    const first = readLog(path, log.identity)
    if (!first.ok) throw new Error(first.problem)
    expect(texts(first)).toEqual(['a', 'bb', '{"k":"x"}'])
    expect(first.seal).toMatchObject({ records: 3, bytes: statSync(path).size })
    const again = WriteAheadLog.resume(path, first)
    again.append(Buffer.from('d'))
    again.close()
    expect(texts(readLog(path, log.identity))).toEqual(['a', 'bb', '{"k":"x"}', 'd'])
    expect(readLog(path, log.identity).ok).toBe(true)
  })

  it('drops an unsealed record cut at any byte (a torn append), and keeps it whole', async () => {
    const { bytes, identity, ends } = await crashed(['first', 'second'], ['third, never acknowledged'])
    const sealedEnd = ends[1] as number
    for (let cut = sealedEnd; cut <= bytes.length; cut++) {
      const reading = read(bytes.subarray(0, cut), identity)
      expect(reading.ok, `cut at ${cut}`).toBe(true)
      expect(texts(reading), `cut at ${cut}`).toEqual(cut === bytes.length ? ['first', 'second', 'third, never acknowledged'] : ['first', 'second'])
    }
    // Zeros the file system left after a torn append are a tear too.
    const zeroed = Buffer.concat([bytes.subarray(0, sealedEnd + 5), Buffer.alloc(64)])
    expect(texts(read(zeroed, identity))).toEqual(['first', 'second'])
    // Half a header, then the zeros of a page never written: torn too; with its payload after it, damage.
    const halfHeader = Buffer.concat([bytes.subarray(0, sealedEnd + 6), Buffer.alloc(bytes.length - sealedEnd - 6)])
    expect(texts(read(halfHeader, identity))).toEqual(['first', 'second'])
    const badHeader = Buffer.from(bytes)
    badHeader[sealedEnd + 5] = (badHeader[sealedEnd + 5] as number) ^ 0x01
    expect(read(badHeader, identity)).toMatchObject({ ok: false, problem: `has a damaged record header at byte ${sealedEnd}, past its seal but followed by more` })
  })

  it('refuses a log cut anywhere inside its sealed part, saying how many writes were sealed', async () => {
    const { bytes, identity, ends } = await crashed(['first', 'second', 'third'])
    for (let cut = 0; cut < bytes.length; cut++) {
      const reading = read(bytes.subarray(0, cut), identity)
      expect(reading.ok, `cut at ${cut}`).toBe(false)
      if (reading.ok) continue
      expect(texts(reading), `cut at ${cut}`).toEqual(['first', 'second', 'third'].slice(0, ends.filter((e) => e <= cut).length))
      if (cut >= 64) expect(reading).toMatchObject({ sealed: 3, problem: expect.stringMatching(/cut to \d+ bytes, short of the \d+ sealed/) })
    }
    expect(read(Buffer.alloc(0), identity)).toMatchObject({ ok: false, problem: 'is empty (its header is gone)' })
    expect(readLog(join(dir, 'nothing-here.log'), identity)).toMatchObject({ ok: false, problem: 'is missing' })
  })

  it('tells a changed byte in the last acknowledged record (damage) from one in an unacknowledged one (a tear)', async () => {
    const { bytes, identity, ends } = await crashed(['kept', 'last acknowledged'], ['never acknowledged'])
    const inSealed = Buffer.from(bytes)
    const at = (ends[1] as number) - 1
    inSealed[at] = (inSealed[at] as number) ^ 0x20
    expect(read(inSealed, identity)).toMatchObject({ ok: false, sealed: 2, problem: `has damage in record 2 (byte ${(ends[0] as number)}), inside its sealed part` })
    const inTail = Buffer.from(bytes)
    inTail[bytes.length - 1] = (inTail[bytes.length - 1] as number) ^ 0x20
    expect(texts(read(inTail, identity))).toEqual(['kept', 'last acknowledged'])
  })

  it('refuses another log than the one expected, a file that is not a log, and the unsealed format', async () => {
    const { bytes, identity } = await crashed(['x'])
    expect(read(bytes, { ...identity, id: '0000000000000000' })).toMatchObject({ ok: false, problem: expect.stringMatching(/^is another log \(id [0-9a-f]{16}, after checkpoint 7\)/) })
    expect(read(Buffer.from('{"not":"a log", "but long enough to hold a whole header, and more"}'), identity)).toMatchObject({ ok: false, problem: expect.stringMatching(/does not start with the log header/) })
    expect(read(Buffer.from('QRYWAL01'), identity)).toMatchObject({ ok: false, problem: expect.stringMatching(/unsealed format of an unreleased Quarry \(QRYWAL01\)/) })
  })

  it('reads records across its read window and tails of zeros longer than it, as the tears or damage they are', async () => {
    // Over 2 MB of frames of uneven sizes, straddling the reader's 1 MiB window, and one read
    // straight into its own buffer (over 64 KiB); then one never acknowledged.
    const sealed = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(i === 1500 ? 100_000 : 500 + (i % 467)))
    const { bytes, identity, ends } = await crashed(sealed, ['never acknowledged'])
    const sealedEnd = ends[sealed.length - 1] as number
    const zeros = Buffer.alloc(3 * 1024 * 1024)
    const one = Buffer.from([1])
    expect(texts(read(bytes, identity))).toEqual([...sealed, 'never acknowledged'])
    expect(read(Buffer.concat([bytes, zeros]), identity)).toMatchObject({ ok: true, droppedBytes: zeros.length, end: bytes.length })
    expect(read(Buffer.concat([bytes, zeros, one]), identity)).toMatchObject({ ok: false, sealed: sealed.length, problem: `has a damaged record header at byte ${bytes.length}, past its seal but followed by more` })
    // The record never acknowledged cut short, or failing its checksum, then zeros: a tear; a byte after them makes it damage.
    const cut = Buffer.concat([bytes.subarray(0, bytes.length - 3), zeros])
    expect(read(cut, identity)).toMatchObject({ ok: true, droppedBytes: cut.length - sealedEnd, end: sealedEnd })
    const changed = Buffer.from(bytes)
    changed[bytes.length - 1] = (changed[bytes.length - 1] as number) ^ 0x20
    const torn = read(Buffer.concat([changed, zeros]), identity)
    expect(torn).toMatchObject({ ok: true, droppedBytes: changed.length + zeros.length - sealedEnd, end: sealedEnd })
    expect(texts(torn)).toEqual(sealed)
    expect(read(Buffer.concat([changed, zeros, one]), identity)).toMatchObject({ ok: false, sealed: sealed.length, problem: `has a damaged record at byte ${sealedEnd}, past its seal but followed by more` })
  })

  it('after any single changed byte, gives back every acknowledged record or refuses (property)', async () => {
    const payloads = ['alpha', 'beta', 'gamma', 'delta']
    const { bytes, identity } = await crashed(payloads)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const changed = Buffer.from(bytes)
        changed[at] = (changed[at] as number) ^ xor
        const reading = read(changed, identity)
        if (reading.ok) expect(texts(reading)).toEqual(payloads)
        else expect(payloads.slice(0, reading.records.length)).toEqual(texts(reading))
      }),
      { numRuns: runs(300) },
    )
  })

  it('shares syncs between concurrent callers (group commit) and seals each record before its sync resolves', async () => {
    const path = fresh()
    const log = WriteAheadLog.create(path, 1)
    const waits: Promise<void>[] = []
    for (let i = 0; i < 100; i++) {
      log.append(Buffer.from(`record ${i}`))
      waits.push(log.sync().then(() => expect(readLog(path, log.identity)).toMatchObject({ ok: true, seal: { records: expect.any(Number) } })))
    }
    await Promise.all(waits)
    // Read before close (which seals too): the syncs alone sealed all 100.
    const reading = readLog(path, log.identity)
    log.close()
    expect(reading).toMatchObject({ ok: true, seal: { records: 100, bytes: statSync(path).size } })
    expect(texts(reading)).toEqual(Array.from({ length: 100 }, (_, i) => `record ${i}`))
  })
})
