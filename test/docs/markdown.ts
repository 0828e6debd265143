import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root folder. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** A fenced code block of a markdown file. */
export interface FencedBlock {
  /** The info string after the opening fence, e.g. `ts runnable serve`. */
  readonly info: string
  /** The info string's words: the language first, then flags such as `runnable`. */
  readonly words: readonly string[]
  readonly code: string
  /** 1-based line of the opening fence. */
  readonly line: number
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/

/** The fenced code blocks of a markdown text, in order (CommonMark fences, not indented code). */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n')
  const blocks: FencedBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string)
    if (!open) continue
    const fence = open[1] as string
    const info = (open[2] as string).trim()
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j] as string
      const close = FENCE.exec(line)
      if (close && (close[1] as string)[0] === fence[0] && (close[1] as string).length >= fence.length && (close[2] as string).trim() === '') break
      body.push(line)
    }
    blocks.push({ info, words: info.split(/\s+/).filter(Boolean), code: body.join('\n'), line: i + 1 })
    i = j
  }
  return blocks
}

/** The markdown with fenced code blocks blanked out (lines kept). */
export function withoutFences(markdown: string): string {
  const lines = markdown.split('\n')
  let fence: string | undefined
  const out = lines.map((line) => {
    const m = FENCE.exec(line)
    if (fence === undefined) {
      if (m) {
        fence = m[1] as string
        return ''
      }
      return line
    }
    if (m && (m[1] as string)[0] === fence[0] && (m[1] as string).length >= fence.length && (m[2] as string).trim() === '') fence = undefined
    return ''
  })
  return out.join('\n')
}

/** The markdown with fenced code blocks and inline code blanked out (lines kept), for link scanning. */
export function withoutCode(markdown: string): string {
  return withoutFences(markdown)
    .split('\n')
    .map((line) => line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, ''))
    .join('\n')
}

/**
 * GitHub's anchor for a heading: the text without markup, lower-cased, with everything but letters,
 * digits, spaces, `-` and `_` removed and spaces turned into `-`.
 */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a link can name in this markdown: heading slugs (repeats numbered) and `<a id>` / `<a name>`. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of withoutFences(markdown).split('\n')) {
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (h) {
      const base = slug(h[1] as string)
      const n = seen.get(base) ?? 0
      seen.set(base, n + 1)
      found.add(n === 0 ? base : `${base}-${n}`)
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(a[1] as string)
  }
  return found
}

/** A link of a markdown text: its target as written and the line it is on. */
export interface Link {
  readonly target: string
  readonly line: number
}

/** Inline links and images `[text](target)` outside code. */
export function links(markdown: string): Link[] {
  const out: Link[] = []
  withoutCode(markdown)
    .split('\n')
    .forEach((line, i) => {
      for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1] as string, line: i + 1 })
    })
  return out
}

/** The repository's documentation: README.md and every markdown file under docs/ (paths relative to the root). */
export function docFiles(options: { generated: boolean }): string[] {
  const files = ['README.md']
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (options.generated || path !== join('docs', 'api')) walk(path)
      } else if (entry.name.endsWith('.md')) files.push(relative(ROOT, join(ROOT, path)))
    }
  }
  walk('docs')
  return files.sort()
}

export function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8')
}
