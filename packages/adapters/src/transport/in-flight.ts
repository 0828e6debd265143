/** What a set of slots counts, for its refusal message. */
export interface SlotKind {
  /** Plural noun: `requests`, `event streams`. */
  readonly noun: string
  /** The option (and flag) that sets the limit. */
  readonly option: string
}

const REQUESTS: SlotKind = { noun: 'requests', option: 'maxInFlight' }

/**
 * The client a remote address stands for, in the per-client shares: the address itself, or
 * undefined on loopback. Every process on this machine shares 127.0.0.1, so a share per loopback
 * address would only cap the machine's own clients together; they count against the server's
 * limits alone (a web page on this machine is stopped by its Fetch Metadata, transport/guard.ts).
 */
export function clientOf(address: string | undefined): string | undefined {
  if (address === undefined || address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.')) return undefined
  return address
}

/**
 * A bound on what a server holds at once: beyond it a request is answered RESOURCE_EXHAUSTED
 * (HTTP 429) at once, instead of queuing without bound — writes wait for one another, so a flood
 * of them would otherwise grow memory and latency until the process falls over. One client (a
 * remote address, {@link clientOf}) holds at most a share of the slots, max(8, limit / 4), so one
 * machine cannot take them all. API requests over both transports count against one; the console's
 * event streams have their own.
 */
export class InFlight {
  readonly limit: number
  readonly perClient: number
  readonly #kind: SlotKind
  #count = 0
  readonly #byClient = new Map<string, number>()

  constructor(limit: number, kind: SlotKind = REQUESTS) {
    this.limit = limit
    this.perClient = Math.min(limit, Math.max(8, Math.ceil(limit / 4)))
    this.#kind = kind
  }

  /** Takes a slot (for `client`, when not on loopback); false when none is left (answer RESOURCE_EXHAUSTED). */
  enter(client?: string): boolean {
    if (this.#count >= this.limit) return false
    if (client !== undefined) {
      const held = this.#byClient.get(client) ?? 0
      if (held >= this.perClient) return false
      this.#byClient.set(client, held + 1)
    }
    this.#count++
    return true
  }

  /** Gives back a slot taken by {@link InFlight.enter} with the same client. */
  leave(client?: string): void {
    this.#count--
    if (client === undefined) return
    const held = (this.#byClient.get(client) ?? 1) - 1
    if (held > 0) this.#byClient.set(client, held)
    else this.#byClient.delete(client)
  }

  /** The message of a refused request. */
  message(client?: string): string {
    const { noun, option } = this.#kind
    if (client !== undefined && this.#count < this.limit) return `This client (${client.slice(0, 64)}) holds ${this.perClient} ${noun} already, its share of the server's ${this.limit} (${option}); retry shortly, or send fewer at once.`
    return `The server is holding ${this.limit} ${noun} already (${option}); retry shortly, or send fewer at once.`
  }
}
