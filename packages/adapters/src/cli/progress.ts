/**
 * A progress bar with rate and ETA for long CLI steps. On a terminal it redraws one line; in a
 * log (CI, pipes) it prints a line every 10%.
 */
interface Progress {
  /** Reports `done` of the total; `detail` (e.g. "120 chunks") is shown after the rate. */
  tick(done: number, detail?: string): void
  done(note?: string): void
}

/**
 * `unit` is a regular plural ("files", "chunks"): one of them is said without its "s" ("1 file").
 */
export function progress(label: string, total: number, unit = 'items', stream: NodeJS.WriteStream = process.stderr): Progress {
  const start = performance.now()
  const units = total === 1 && unit.endsWith('s') ? unit.slice(0, -1) : unit
  const tty = stream.isTTY === true
  let lastDecile = -1
  let lastDraw = 0
  const line = (done: number, detail: string | undefined): string => {
    const elapsed = (performance.now() - start) / 1000
    const rate = done / Math.max(elapsed, 1e-9)
    const eta = rate > 0 ? (total - done) / rate : 0
    const width = 28
    const filled = Math.round((done / Math.max(total, 1)) * width)
    return `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${units} · ${Math.round(rate)}/s${detail ? ` · ${detail}` : ''} · ETA ${eta.toFixed(0)}s`
  }
  return {
    tick(done, detail) {
      const now = performance.now()
      if (tty) {
        if (now - lastDraw < 100 && done < total) return
        lastDraw = now
        stream.write(`\r${line(done, detail)}\x1b[K`)
      } else {
        const decile = Math.floor((done / Math.max(total, 1)) * 10)
        if (decile === lastDecile) return
        lastDecile = decile
        stream.write(`${line(done, detail)}\n`)
      }
    },
    done(note) {
      const seconds = ((performance.now() - start) / 1000).toFixed(1)
      stream.write(`${tty ? '\r\x1b[K' : ''}${label}: ${total} ${units} in ${seconds}s${note ? ` (${note})` : ''}\n`)
    },
  }
}
