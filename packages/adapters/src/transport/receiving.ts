import { inSlices, sweepPeriodMs } from './slices.js'

/**
 * How both transports receive request bodies before a request takes a slot (http/server.ts,
 * grpc/server.ts): a body or message that sends nothing for `idleMs` ends (408, DEADLINE_EXCEEDED),
 * and the bodies being received at once, REST's and gRPC's together, hold at most `budgetBytes`
 * (then 429, RESOURCE_EXHAUSTED), so slow or stalled senders hold neither slots nor unbounded memory.
 *
 * The budget is shared, so who holds it matters as much as how much is held. A body counted through
 * {@link Receiving.start}:
 * - from a remote client (transport/in-flight.ts `clientOf`; loopback clients count against the
 *   server's bound alone, as for slots) holds at most {@link Receiving.perClient}, half the budget,
 *   so one machine leaves room for others;
 * - still arriving {@link Receiving.holdMs} after it began is ended (408) when another body needs
 *   its room, oldest first. A client that sends almost all of four large bodies and then a byte
 *   now and then (never idle for `idleMs`) would otherwise hold the budget until Node's
 *   `requestTimeout`; now only until someone else needs it, after `holdMs`. A body that is
 *   merely slow keeps going while nobody waits for room.
 *
 * A body counted through `start` that receives nothing for `idleMs` is ended too (408), by a sweep
 * of the bodies every `idleMs / 4` (at most a second, at least 10 ms), as gRPC's calls are, not by a
 * timer per body: most bodies arrive whole with their request, and would pay for setting and
 * clearing a timer each. So a stalled body ends between `idleMs` and `idleMs` plus the sweep's
 * period after its last byte; bodies that stalled together are ended a slice at a time.
 *
 * gRPC adds its bytes to `pending` directly; its messages count in the budget but are not ended to
 * make room (they end after `idleMs` without progress, by grpc/server.ts's own sweep).
 */
export class Receiving {
  /** Bytes of bodies received so far and not yet complete. */
  pending = 0
  /** The most one remote client's bodies hold at once: half the budget. */
  readonly perClient: number
  /** How long a body may be arriving before it may be ended to make room for others: four idle times. */
  readonly holdMs: number
  /** Bodies counted through `start`, oldest first (a Set iterates in insertion order). */
  readonly #bodies = new Set<ReceivingBody>()
  readonly #byClient = new Map<string, number>()
  /** The idle sweep, running while bodies are counted (it stops itself at a sweep that finds none). */
  #sweep: NodeJS.Timeout | undefined
  /** Whether the bodies a sweep found idle are still being ended (the next sweep waits for them). */
  #ending = false

  /** `options.holdMs`: four idle times unless given. */
  constructor(
    readonly idleMs: number,
    readonly budgetBytes: number,
    options: { readonly holdMs?: number } = {},
  ) {
    this.perClient = Math.ceil(budgetBytes / 2)
    this.holdMs = options.holdMs ?? 4 * idleMs
  }

  /**
   * Starts counting a body from `client` (undefined: loopback). `evict` is called (once, and the
   * body no longer counts) when the body is ended, to make room for another or after `idleMs`
   * without bytes: it answers 408 with the message it is given and stops reading.
   */
  start(client: string | undefined, evict: (message: string) => void): ReceivingBody {
    const body = new ReceivingBody(this, client, evict)
    this.#bodies.add(body)
    if (this.#sweep === undefined) {
      this.#sweep = setInterval(() => this.#endIdle(), sweepPeriodMs(this.idleMs))
      this.#sweep.unref()
    }
    return body
  }

  /** Ends the bodies that received nothing for `idleMs`; stops the sweep when no body is counted. */
  #endIdle(): void {
    if (this.#ending) return
    if (this.#bodies.size === 0) {
      clearInterval(this.#sweep)
      this.#sweep = undefined
      return
    }
    const idleSince = performance.now() - this.idleMs
    const due = [...this.#bodies].filter((body) => body.lastAt <= idleSince)
    if (due.length === 0) return
    this.#ending = true
    inSlices(
      due,
      (body) => {
        // Asked again: the body may have ended, or received bytes, since the sweep.
        if (!this.#bodies.has(body) || body.lastAt > performance.now() - this.idleMs) return
        this.remove(body)
        body.evict(`The request body made no progress for ${this.idleMs / 1000} s (${body.bytes} bytes received); send it without pauses.`)
      },
      () => (this.#ending = false),
    )
  }

  /** @internal Counts `n` more bytes of `body`: its refusal message when they do not fit, else undefined. */
  add(body: ReceivingBody, n: number): string | undefined {
    // Ended already (refused, or ended to make room): its bytes no longer count.
    if (!this.#bodies.has(body)) return undefined
    this.pending += n
    const client = body.client
    if (client !== undefined) {
      const held = (this.#byClient.get(client) ?? 0) + n
      this.#byClient.set(client, held)
      if (held > this.perClient) return `This client (${client.slice(0, 64)}) is sending ${this.perClient} bytes of request bodies already, its share of the ${this.budgetBytes} the server receives at once; retry shortly, or send fewer large bodies at once.`
    }
    if (this.pending > this.budgetBytes) this.#makeRoom(body)
    if (this.pending > this.budgetBytes) return `The server is receiving ${this.budgetBytes} bytes of request bodies already; retry shortly, or send fewer large bodies at once.`
    return undefined
  }

  /** @internal Stops counting `body` (its bytes leave the budget). */
  remove(body: ReceivingBody): void {
    if (!this.#bodies.delete(body)) return
    this.pending -= body.bytes
    const client = body.client
    if (client === undefined) return
    const held = (this.#byClient.get(client) ?? 0) - body.bytes
    if (held > 0) this.#byClient.set(client, held)
    else this.#byClient.delete(client)
  }

  /** Ends bodies arriving for longer than `holdMs`, oldest first, until the budget holds `pending` (or none is left to end). */
  #makeRoom(needing: ReceivingBody): void {
    const startedBefore = performance.now() - this.holdMs
    for (const body of this.#bodies) {
      if (this.pending <= this.budgetBytes || body.startedAt > startedBefore) return
      if (body === needing) continue
      const message = `The request body was still arriving after ${this.holdMs / 1000} s (${body.bytes} bytes received) while others waited for room among the bodies the server receives at once; send it faster, or in smaller requests.`
      this.remove(body)
      body.evict(message)
    }
  }
}

/** One body being received: its bytes count in its {@link Receiving}'s budget until `end`. */
export class ReceivingBody {
  bytes = 0
  readonly startedAt = performance.now()
  /** When its last bytes came (or it began): the idle sweep's clock. */
  lastAt = this.startedAt

  constructor(
    readonly receiving: Receiving,
    readonly client: string | undefined,
    readonly evict: (message: string) => void,
  ) {}

  /** Counts `n` more bytes: undefined when they fit, else why not (answer 429; the body no longer counts once ended). */
  add(n: number): string | undefined {
    this.bytes += n
    this.lastAt = performance.now()
    return this.receiving.add(this, n)
  }

  /** Stops counting the body: it is whole, refused, or gone. Safe to call twice. */
  end(): void {
    this.receiving.remove(this)
  }
}
