/**
 * A bound on the requests a server holds at once (both transports count against one): beyond it a
 * request is answered RESOURCE_EXHAUSTED (HTTP 429) at once, instead of queuing without bound —
 * writes wait for one another, so a flood of them would otherwise grow memory and latency until the
 * process falls over.
 */
export class InFlight {
  readonly limit: number
  #count = 0

  constructor(limit: number) {
    this.limit = limit
  }

  /** Takes a slot; false when all are taken (answer RESOURCE_EXHAUSTED). */
  enter(): boolean {
    if (this.#count >= this.limit) return false
    this.#count++
    return true
  }

  leave(): void {
    this.#count--
  }

  /** The message of a refused request. */
  message(): string {
    return `The server is holding ${this.limit} requests already (maxInFlight); retry shortly, or send fewer at once.`
  }
}
