/**
 * How both transports receive request bodies before a request takes a slot (http/server.ts,
 * grpc/server.ts): a body or message that sends nothing for `idleMs` ends (408, DEADLINE_EXCEEDED),
 * and the bodies being received at once, REST's and gRPC's together, hold at most `budgetBytes`
 * (then 429, RESOURCE_EXHAUSTED), so slow or stalled senders hold neither slots nor unbounded memory.
 */
export class Receiving {
  /** Bytes of bodies received so far and not yet complete. */
  pending = 0
  constructor(
    readonly idleMs: number,
    readonly budgetBytes: number,
  ) {}
}
