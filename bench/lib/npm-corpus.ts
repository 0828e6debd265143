import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defaultCacheDir } from '@quarry/core'
import type { TextDoc } from './text-engines.js'

/**
 * A real-text corpus that exists on any machine after install: the sentences of the markdown and
 * text files shipped inside npm packages (this workspace's node_modules and the global npm
 * install) and of the comments in their .ts and .js files. Paragraphs alone give ~21,000
 * documents on this machine and sentences ~31,000, so both are documents (passages at two
 * granularities, like a passage index with two window sizes): every paragraph and every sentence
 * of at least six words, deduplicated. Built once, cached as JSONL.
 */
/** Shorter units than this many words are not documents. */
const MIN_WORDS = 5

export function npmCorpus(): TextDoc[] {
  const file = join(defaultCacheDir(), 'bench', 'npm-corpus-v5.jsonl')
  if (existsSync(file)) {
    return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as TextDoc)
  }
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
  const roots = [join(root, 'node_modules', '.pnpm'), resolve(dirname(process.execPath), '..', 'lib', 'node_modules')].filter((r) => existsSync(r))
  const seen = new Set<string>()
  const docs: TextDoc[] = []
  const addUnit = (source: string, n: number, raw: string): void => {
    const paragraph = raw.replace(/\s+/g, ' ').trim()
    const units = [paragraph, ...paragraph.split(/(?<=[.!?])\s+(?=[A-Z`"'(\[])/)]
    units.forEach((sentence, i) => {
      if (sentence.split(' ').length < MIN_WORDS || sentence.length > 4000) return
      const hash = createHash('sha1').update(sentence).digest('base64')
      if (seen.has(hash)) return
      seen.add(hash)
      docs.push({ id: String(docs.length), title: `${source} #${n}.${i}`, text: sentence })
    })
  }
  for (const path of walk(roots)) {
    const source = path.split('node_modules/').at(-1) ?? path
    const content = readFileSync(path, 'utf8')
    if (!/\.(md|markdown|txt)$/i.test(path)) {
      let n = 0
      for (const m of content.matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
        const prose = (m[1] ?? '').split('\n').map((l) => l.replace(/^\s*\*\s?/, '')).filter((l) => !l.startsWith('@')).join(' ')
        addUnit(source, n++, prose)
      }
      // Runs of // line comments are prose too.
      for (const m of content.matchAll(/(?:^[ \t]*\/\/.*\n)+/gm)) {
        addUnit(source, n++, m[0].replace(/^[ \t]*\/\/ ?/gm, ' '))
      }
    } else {
      content.split(/\n\s*\n/).forEach((paragraph, n) => addUnit(source, n, paragraph))
    }
  }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, docs.map((d) => JSON.stringify(d)).join('\n') + '\n')
  return docs
}

function* walk(roots: readonly string[]): Generator<string> {
  const stack = [...roots]
  const visited = new Set<string>()
  while (stack.length > 0) {
    const dir = stack.pop() as string
    let real: string
    try {
      real = statSync(dir).isDirectory() ? dir : ''
    } catch {
      continue
    }
    if (!real || visited.has(dir)) continue
    visited.add(dir)
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory() || entry.isSymbolicLink()) {
        if (entry.name !== '.bin' && !visited.has(path)) stack.push(path)
      } else if (/\.(md|markdown|txt)$/i.test(entry.name) || /\.(ts|mts|cts|js|cjs|mjs)$/.test(entry.name)) {
        yield path
      }
    }
  }
}
