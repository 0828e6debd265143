import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { accessCheck, checkAccess, refuseOtherSite } from '../../packages/adapters/src/transport/guard.js'
import { clientOf, InFlight } from '../../packages/adapters/src/transport/in-flight.js'
import { runs } from '../support/runs.js'

describe('clientOf', () => {
  it('is undefined on loopback (every local process shares it) and the address elsewhere', () => {
    expect(['127.0.0.1', '127.3.4.5', '::1', '::ffff:127.0.0.1', undefined].map(clientOf)).toEqual([undefined, undefined, undefined, undefined, undefined])
    expect(['10.0.0.7', '::ffff:192.168.1.2', 'fe80::1', '128.0.0.1'].map(clientOf)).toEqual(['10.0.0.7', '::ffff:192.168.1.2', 'fe80::1', '128.0.0.1'])
  })
})

describe('InFlight', () => {
  it('gives a remote client max(8, limit / 4) slots, loopback only the server limit, and frees them on leave', () => {
    expect([1, 2, 8, 32, 33, 256].map((limit) => new InFlight(limit).perClient)).toEqual([1, 2, 8, 8, 9, 64])
    const slots = new InFlight(256)
    const taken = Array.from({ length: 70 }, () => slots.enter('10.0.0.7'))
    expect(taken.indexOf(false)).toBe(64)
    expect(slots.message('10.0.0.7')).toBe("This client (10.0.0.7) holds 64 requests already, its share of the server's 256 (maxInFlight); retry shortly, or send fewer at once.")
    expect(slots.enter('10.0.0.8')).toBe(true)
    expect(slots.enter()).toBe(true)
    slots.leave('10.0.0.7')
    expect(slots.enter('10.0.0.7')).toBe(true)
  })

  it('matches a model of per-client counts over any sequence of enters and leaves', () => {
    const clients = [undefined, '10.0.0.1', '10.0.0.2']
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.tuple(fc.boolean(), fc.constantFrom(...clients)), { maxLength: 200 }), (limit, steps) => {
        const slots = new InFlight(limit, { noun: 'event streams', option: 'maxEventStreams' })
        const held = new Map<string | undefined, number>()
        let total = 0
        for (const [enter, client] of steps) {
          const mine = held.get(client) ?? 0
          if (enter) {
            const expected = total < limit && (client === undefined || mine < slots.perClient)
            expect(slots.enter(client)).toBe(expected)
            if (expected) {
              held.set(client, mine + 1)
              total++
            }
          } else if (mine > 0) {
            slots.leave(client)
            held.set(client, mine - 1)
            total--
          }
        }
        // What is left free is exactly what the model says.
        const free = Array.from({ length: limit + 1 }, () => slots.enter()).indexOf(false)
        expect(free).toBe(limit - total)
        expect(slots.message()).toBe(`The server is holding ${limit} event streams already (maxEventStreams); retry shortly, or send fewer at once.`)
      }),
      { numRuns: runs(100) },
    )
  })
})

describe('refuseOtherSite', () => {
  const page = true
  const api = false
  it('admits same-origin and typed-in requests, and CORS-allowed origins', () => {
    expect(refuseOtherSite({ site: 'same-origin', mode: 'cors', dest: 'empty' }, false, api)).toBeUndefined()
    expect(refuseOtherSite({ site: 'none', mode: 'navigate', dest: 'document' }, false, api)).toBeUndefined()
    expect(refuseOtherSite({ site: 'cross-site', mode: 'cors', dest: 'empty' }, true, api)).toBeUndefined()
  })

  it("refuses other sites and other ports except a top-level navigation to the console's page", () => {
    expect(refuseOtherSite({ site: 'cross-site', mode: 'navigate', dest: 'document' }, false, page)).toBeUndefined()
    expect(refuseOtherSite({ site: 'same-site', mode: 'navigate', dest: 'document' }, false, page)).toBeUndefined()
    const refused = [
      refuseOtherSite({ site: 'cross-site', mode: 'navigate', dest: 'document' }, false, api),
      refuseOtherSite({ site: 'cross-site', mode: 'navigate', dest: 'iframe' }, false, page),
      refuseOtherSite({ site: 'same-site', mode: 'no-cors', dest: 'image' }, false, page),
    ]
    expect(refused).toEqual([
      "A request from a page of another site (Sec-Fetch-Site: cross-site) is refused: open the console's page itself, or start Quarry with --cors-origin ORIGIN (the corsOrigins option) to let that site's pages call it.",
      "A request from a page of another site (Sec-Fetch-Site: cross-site) is refused: open the console's page itself, or start Quarry with --cors-origin ORIGIN (the corsOrigins option) to let that site's pages call it.",
      "A request from a page of another site (Sec-Fetch-Site: same-site) is refused: open the console's page itself, or start Quarry with --cors-origin ORIGIN (the corsOrigins option) to let that site's pages call it.",
    ])
  })
})

describe('accessCheck', () => {
  it('answers every request as checkAccess does, whatever came before it', () => {
    const host = fc.option(fc.constantFrom('localhost:8080', '127.0.0.1:8080', 'evil.example', 'app.example.com', 'Example.COM.:80', 'localhost:80@evil', '[::1]:8080', 'a.localhost', 'myhost:8080'), { nil: undefined })
    const origin = fc.option(fc.constantFrom('http://localhost:8080', 'https://evil.example', 'null', 'http://app.example.com'), { nil: undefined })
    const boundHost = fc.option(fc.constantFrom('127.0.0.1', 'myhost', 'app.example.com'), { nil: undefined })
    const options = { allowedHosts: ['.example.com'], corsOrigins: ['http://app.example.com'] }
    fc.assert(
      fc.property(fc.array(fc.tuple(host, origin, boundHost), { maxLength: 30 }), (requests) => {
        const check = accessCheck(options)
        for (const [h, o, b] of requests) expect(check({ host: h, origin: o }, b)).toEqual(checkAccess({ host: h, origin: o }, b, options))
      }),
      { numRuns: runs(200) },
    )
  })
})
