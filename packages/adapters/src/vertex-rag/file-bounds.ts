/**
 * What reading one file (an upload, or a file an import reads) may cost: the bytes it expands to,
 * its pages, its time. Each bound fails that file alone, with a message naming the bound and how
 * to raise it. Raw bytes are bounded before this, by `maxFileBytes` (sources.ts, files.ts).
 */
export interface FileBounds {
  /** A PDF's compressed streams inflated together, and any file's extracted text (characters). */
  readonly maxInflatedBytes: number
  readonly maxPages: number
  /** Extraction and chunking on the file's thread (bounded-analysis.ts). */
  readonly timeoutMs: number
}

export const FILE_BOUNDS_DEFAULT: FileBounds = { maxInflatedBytes: 64 * 1024 * 1024, maxPages: 2000, timeoutMs: 60_000 }

/**
 * No bounds: a replayed write reads its files without them (the write-ahead log recorded which
 * files went over; every other one was within the bounds of the server that acknowledged it).
 */
export const UNBOUNDED: FileBounds = { maxInflatedBytes: Number.MAX_SAFE_INTEGER, maxPages: Number.MAX_SAFE_INTEGER, timeoutMs: 0 }

/** How each bound is raised, by option and by `quarry serve` flag. */
const RAISE = {
  inflated: (b: FileBounds) => `a file may expand to at most ${b.maxInflatedBytes} bytes (the maxInflatedBytes option, quarry serve --max-inflated-mb)`,
  pages: (b: FileBounds) => `a file takes at most ${b.maxPages} pages (the maxFilePages option, quarry serve --max-pages)`,
  time: (b: FileBounds) => `a file gets at most ${b.timeoutMs / 1000} s (the fileTimeoutMs option, quarry serve --file-timeout-s)`,
}

/** The message of a file over a bound; `label` names the file (its URI or display name). */
export function overBound(label: string, bound: keyof typeof RAISE, found: string, bounds: FileBounds): string {
  return `${label}: ${found}; ${RAISE[bound](bounds)}. Not read.`
}
