import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SectionReader, SectionWriter } from '../../packages/core/src/persist/sections.js'
import { runSteps, type Steps } from '../../packages/core/src/persist/steps.js'
import { runs } from '../support/runs.js'

/** Writes sections into memory (what a GenerationFile would write to disk), 8-byte aligned. */
function written(write: (w: SectionWriter) => Steps): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = []
  const writer = new SectionWriter({ text: (s) => parts.push(Buffer.from(s, 'utf8')), bytes: (b) => parts.push(Uint8Array.from(b)), *finish() {} })
  runSteps(write(writer))
  const total = parts.reduce((n, p) => n + p.byteLength, 0)
  const out = new Uint8Array(new ArrayBuffer(total))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

class Bad extends Error {}
const reader = (bytes: Uint8Array<ArrayBuffer>): SectionReader => new SectionReader(bytes, () => new Bad('not valid'))

describe('snapshot sections (version 5)', () => {
  it('round-trips typed arrays and string lists exactly: absent entries, latin1, any UTF-16 (lone surrogates too), groups', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-composite' }), fc.constant('\ud800x\udfff')), { nil: undefined }), { maxLength: 40 }),
        fc.array(fc.double(), { maxLength: 10 }),
        (strings, doubles) => {
          const u32 = Uint32Array.from(strings, (_, i) => i * 7)
          const bytes = written(function* (w) {
            yield* w.strings(strings.length, (i) => strings[i])
            yield* w.f64(Float64Array.from(doubles))
            yield* w.u32(u32)
            yield* w.concat('f32', 3, [Float32Array.of(1), Float32Array.of(2, 3)])
            yield* w.u8(Uint8Array.of(1, 2, 3))
          })
          expect(bytes.byteLength % 8).toBe(0)
          const refs = reader(bytes).stringRefs(strings.length)
          expect(Array.from({ length: refs.length }, (_, i) => refs.at(i))).toEqual(strings)
          expect(Array.from({ length: refs.length }, (_, i) => refs.has(i))).toEqual(strings.map((x) => x !== undefined))
          const r = reader(bytes)
          expect(r.strings(strings.length)).toEqual(strings)
          expect([...r.f64()]).toEqual(doubles)
          expect([...r.u32(u32.length)]).toEqual([...u32])
          expect([...r.f32(3)]).toEqual([1, 2, 3])
          expect([...r.u8()]).toEqual([1, 2, 3])
          r.end()
        },
      ),
      { numRuns: runs(200) },
    )
  })

  it('splits long string lists into groups and reads them back, decoded in pieces or left in place', () => {
    // Strings longer than a decoded piece (16K characters) and than a group, latin1 and wide, among short ones.
    const long = (i: number): string => (i % 2 === 0 ? 'x' : '☃').repeat(10_000 + (i % 7) * 9_000)
    const strings = Array.from({ length: 70_000 }, (_, i) => (i % 9_001 === 0 ? long(i) : i % 5 === 0 ? `é—${i}` : i % 11 === 0 ? undefined : `id-${i}`))
    const bytes = written((w) => w.strings(strings.length, (i) => strings[i]))
    expect(reader(bytes).strings()).toEqual(strings)
    const refs = reader(bytes).stringRefs(strings.length)
    expect(Array.from({ length: refs.length }, (_, i) => refs.at(i))).toEqual(strings)
  })

  it('refuses a string list whose lengths and characters disagree, decoded or left in place', () => {
    const strings = ['alpha', 'beta', 'gamma']
    const bytes = written((w) => w.strings(strings.length, (i) => strings[i]))
    // The group's first length (after the 16-byte header and the 24-byte group header), one too long or short.
    for (const delta of [1, -1]) {
      const bad = bytes.slice()
      const lengths = new Uint32Array(bad.buffer, 40, 3)
      lengths[0] = (lengths[0] as number) + delta
      expect(() => reader(bad).strings()).toThrow(Bad)
      expect(() => reader(bad).stringRefs()).toThrow(Bad)
    }
  })

  it('refuses what it was not given: another kind, another count, a short or padded file', () => {
    const bytes = written(function* (w) {
      yield* w.u32(Uint32Array.of(1, 2, 3))
      yield* w.strings(2, (i) => ['a', 'b'][i])
    })
    expect(() => reader(bytes).f32()).toThrow(Bad)
    expect(() => reader(bytes).u32(4)).toThrow(Bad)
    expect(() => reader(bytes.slice(0, bytes.byteLength - 8)).u32()).not.toThrow()
    const cut = reader(bytes.slice(0, bytes.byteLength - 8))
    cut.u32()
    expect(() => cut.strings()).toThrow(Bad)
    const whole = reader(bytes)
    whole.u32()
    expect(() => whole.end()).toThrow(Bad)
    const extra = new Uint8Array(new ArrayBuffer(bytes.byteLength + 8))
    extra.set(bytes)
    const padded = reader(extra)
    padded.u32()
    padded.strings()
    expect(() => padded.end()).toThrow(Bad)
  })

  it('every single-byte change of a section: the same values, or the reader\'s own error (never a RangeError or a wrong length)', () => {
    const strings = ['alpha', 'naïve', '\u2014dash', undefined, '']
    const bytes = written(function* (w) {
      yield* w.strings(strings.length, (i) => strings[i])
      yield* w.u32(Uint32Array.of(5, 6, 7))
    })
    for (let i = 0; i < bytes.byteLength; i++) {
      for (const flip of [1, 0x80]) {
        const copy = bytes.slice()
        copy[i] = (copy[i] as number) ^ flip
        try {
          const r = reader(copy)
          const s = r.strings(strings.length)
          const u = r.u32(3)
          r.end()
          expect(s.length).toBe(5)
          expect(u.length).toBe(3)
        } catch (error) {
          expect(error).toBeInstanceOf(Bad)
        }
      }
    }
  })
})
