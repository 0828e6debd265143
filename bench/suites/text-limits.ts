import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Analyzer } from '@quarry/core'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

/**
 * Analysis time of adversarial text (issue 13): one long whitespace-free "word" of several shapes
 * at 10k to 10M characters, and 10 MB of ordinary text with and without line breaks, through
 * `Analyzer.terms` (the path of BM25 indexing, queries, the GloVe embedder and the chunker) for
 * both tokenizers. Linear analysis shows as a flat µs/char column across sizes.
 */

/** Stop growing a shape once its next size is predicted to take longer than this (quadratic cases before the fix). */
const BUDGET_MS = 60_000
const SIZES = [10_000, 40_000, 100_000, 1_000_000, 10_000_000]
const QUICK_SIZES = [10_000, 40_000, 100_000]

/** A string of exactly n UTF-16 code units made by repeating `unit` (cut at the end). */
function repeatTo(unit: string, n: number): string {
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n)
}

/** Seeded English-like prose with numbers, URLs, e-mails, contractions, hyphens and line breaks. */
function prose(n: number, lineBreaks: boolean): string {
  const words = ['the', 'boundary', 'layer', 'flow', 'over', 'a', 'swept', 'wing', 'is', 'turbulent', 'at', 'high', "Reynolds", 'numbers', 'and', 'heat', 'transfer', "doesn't", 'vary', 'with', 'Mach', 'shock-wave', 'interaction', 'of', 'supersonic', 'nozzle', 'e.g.', 'U.S.', 'café', 'naïve']
  const extras = ['3.5', '1,000', '10:30pm', 'https://example.com/papers/flow?id=42', 'author@example.org', '#cfd', '(see', 'Fig.', '2)', '—', '"quoted"']
  let seed = 13
  const next = (m: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % m
  }
  const parts: string[] = []
  let length = 0
  let line = 0
  while (length < n) {
    const w = next(12) === 0 ? (extras[next(extras.length)] as string) : (words[next(words.length)] as string)
    const end = next(15) === 0 ? '. ' : next(10) === 0 ? ', ' : ' '
    line += w.length + end.length
    const sep = lineBreaks && line > 80 ? '\n' : end
    if (sep === '\n') line = 0
    parts.push(w, sep)
    length += w.length + sep.length
  }
  return parts.join('').slice(0, n)
}

const SHAPES: Record<string, (n: number) => string> = {
  'letters (aaaa…)': (n) => repeatTo('a', n),
  'digits (7777…)': (n) => repeatTo('7', n),
  'punctuation (!!!!…)': (n) => repeatTo('!', n),
  'dotted (a.b.c…)': (n) => repeatTo('a.b.', n),
  'hyphenated (a-b-c…)': (n) => repeatTo('a-b-', n),
  'url (http://x.com/ab/ab…)': (n) => `http://example.com/${repeatTo('ab/', n - 19)}`,
  'email (xxxx…@example.com)': (n) => `${repeatTo('x', n - 12)}@example.com`,
  'emoji (😀😀…)': (n) => repeatTo('😀', n),
  'combining marks (é as e+◌́)': (n) => repeatTo('e\u0301', n),
  "apostrophes (a'a'a…)": (n) => repeatTo("a'", n),
  'lone surrogates (\\ud800a…)': (n) => repeatTo('\ud800a', n),
  'prose, lines of 80': (n) => prose(n, true),
  'prose, one line': (n) => prose(n, false),
}

interface Row {
  tokenizer: 'wink' | 'unicode'
  shape: string
  chars: number
  ms?: number
  terms?: number
  /** Why there is no time: the error thrown, or the prediction that made us skip it. */
  note?: string
}

function measure(tokenizer: 'wink' | 'unicode', text: string): { ms: number; terms: number } | { error: string } {
  // A fresh analyzer each time: its memo of normal forms must not carry over between sizes.
  const analyzer = new Analyzer({ tokenizer })
  analyzer.terms('warm up the tokenizer')
  const t = performance.now()
  try {
    const terms = analyzer.terms(text).length
    return { ms: performance.now() - t, terms }
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}`.slice(0, 80) }
  }
}

/** Analysis time of pathological inputs at growing sizes, for both tokenizers. */
export async function runTextLimits(ctx: SuiteContext): Promise<void> {
  const sizes = ctx.quick ? QUICK_SIZES : SIZES
  const rows: Row[] = []
  for (const tokenizer of ['wink', 'unicode'] as const) {
    for (const [shape, make] of Object.entries(SHAPES)) {
      const done: { chars: number; ms: number }[] = []
      let stopped: string | undefined
      for (const chars of sizes) {
        if (stopped !== undefined) {
          rows.push({ tokenizer, shape, chars, note: stopped })
          continue
        }
        const [a, b] = done.slice(-2)
        if (a && b && b.ms > 500) {
          // Growth exponent of the last two sizes, extrapolated: skip what would blow the budget.
          const exponent = Math.max(1, Math.log(b.ms / a.ms) / Math.log(b.chars / a.chars))
          const predicted = b.ms * (chars / b.chars) ** exponent
          if (predicted > BUDGET_MS) {
            stopped = `skipped: ~${(predicted / 1000).toFixed(0)} s predicted (n^${exponent.toFixed(1)})`
            rows.push({ tokenizer, shape, chars, note: stopped })
            continue
          }
        }
        const r = measure(tokenizer, make(chars))
        if ('error' in r) {
          rows.push({ tokenizer, shape, chars, note: r.error })
          stopped = 'skipped: smaller size failed'
          continue
        }
        done.push({ chars, ms: r.ms })
        rows.push({ tokenizer, shape, chars, ms: r.ms, terms: r.terms })
        if (r.ms > BUDGET_MS) stopped = `skipped: ${chars} chars took ${(r.ms / 1000).toFixed(0)} s`
      }
      const last = rows.at(-1)
      console.log(`${tokenizer} ${shape}: ${rows.filter((r) => r.tokenizer === tokenizer && r.shape === shape).map((r) => (r.ms === undefined ? '—' : `${r.ms.toFixed(0)} ms`)).join(' / ')}${last?.note === undefined ? '' : ` (${last.note})`}`)
    }
  }
  for (const tokenizer of ['wink', 'unicode'] as const) {
    printTable(
      `analysis time, tokenizer '${tokenizer}': ms (µs per character)`,
      Object.keys(SHAPES).map((shape) => ({
        shape,
        ...Object.fromEntries(
          sizes.map((chars) => {
            const r = rows.find((x) => x.tokenizer === tokenizer && x.shape === shape && x.chars === chars)
            const label = chars >= 1e6 ? `${chars / 1e6}M` : `${chars / 1e3}k`
            return [label, r?.ms === undefined ? (r?.note?.startsWith('skipped') ? 'skipped' : 'error') : `${r.ms.toFixed(r.ms < 10 ? 1 : 0)} (${((r.ms * 1000) / chars).toFixed(2)})`]
          }),
        ),
      })),
    )
  }
  const throughput = rows.filter((r) => r.ms !== undefined && r.chars === sizes.at(-1)).map((r) => ({ tokenizer: r.tokenizer, shape: r.shape, 'Mchars/s': r.chars / 1e6 / ((r.ms as number) / 1000) }))
  printTable(`throughput at ${sizes.at(-1)} characters (millions of chars per second)`, throughput)
  writeFileSync(join(ctx.resultsDir, 'text-limits.json'), `${JSON.stringify({ suite: 'text-limits', date: new Date().toISOString(), node: process.version, quick: ctx.quick, budgetMs: BUDGET_MS, rows }, null, 1)}\n`)
}
