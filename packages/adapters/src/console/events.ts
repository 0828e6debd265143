import type { ServerResponse } from 'node:http'
import type { Generation } from './generation.js'

/** Timing of the console's event stream. */
export interface EventTiming {
  /** Generations sent at most this often: the writes of a burst arrive as one event. @defaultValue 250 */
  readonly coalesceMs: number
  /** A comment line this often, so proxies and browsers keep an idle stream open. @defaultValue 15000 */
  readonly keepAliveMs: number
}

const EVENT_TIMING: EventTiming = { coalesceMs: 250, keepAliveMs: 15_000 }

/** One server-sent event: `event: generation`, its data the generation as JSON. */
function generationEvent(generation: number): string {
  return `event: generation\ndata: ${JSON.stringify({ generation })}\n\n`
}

/**
 * Answers GET /console/api/events: a text/event-stream that sends the generation at once and again
 * after writes (coalesced), until the client goes away or the server closes (which destroys the
 * connection: nothing here keeps `close()` waiting). Timers are cleared when the response closes.
 */
export function streamGenerations(res: ServerResponse, generation: Generation, timing: EventTiming = EVENT_TIMING): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
  let sent = -1
  let sentAt = Number.NEGATIVE_INFINITY
  let pending: NodeJS.Timeout | undefined
  const send = (): void => {
    pending = undefined
    if (generation.value === sent || res.writableEnded) return
    sent = generation.value
    sentAt = performance.now()
    res.write(generationEvent(sent))
  }
  send()
  const stop = generation.subscribe(() => {
    pending ??= setTimeout(send, Math.max(0, sentAt + timing.coalesceMs - performance.now()))
  })
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), timing.keepAliveMs)
  res.once('close', () => {
    stop()
    clearInterval(keepAlive)
    clearTimeout(pending)
  })
}
