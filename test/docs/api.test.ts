import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './markdown.js'

/**
 * docs/api/ is TypeDoc's markdown of the exports' TSDoc. It is checked in so it can be read on
 * GitHub, and generated again here so it cannot drift from the code.
 */
const FIX = 'run `npx -y pnpm@12.4.2 run docs` and commit docs/api/'

function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else out.set(relative(dir, path), readFileSync(path, 'utf8'))
    }
  }
  walk(dir)
  return out
}

describe('the API reference in docs/api/', () => {
  it('equals a fresh TypeDoc run over the exports', () => {
    const out = mkdtempSync(join(tmpdir(), 'quarry-api-'))
    try {
      const typedoc = join(dirname(createRequire(import.meta.url).resolve('typedoc/package.json')), 'bin', 'typedoc')
      const run = spawnSync(process.execPath, [typedoc, '--options', 'docs/typedoc.json', '--out', out, '--logLevel', 'Warn'], { cwd: ROOT, encoding: 'utf8' })
      expect(run.status, `TypeDoc failed (a broken {@link}, say):\n${run.stdout}${run.stderr}`).toBe(0)
      const fresh = filesUnder(out)
      const committed = filesUnder(join(ROOT, 'docs', 'api'))
      const differ = [...new Set([...fresh.keys(), ...committed.keys()])].filter((f) => fresh.get(f) !== committed.get(f)).sort()
      expect(differ, `docs/api/ is out of date (${differ.map((f) => (committed.has(f) ? (fresh.has(f) ? `${f} differs` : `${f} is gone`) : `${f} is new`)).join(', ')}): ${FIX}`).toEqual([])
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })
})
