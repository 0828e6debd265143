import { existsSync, statSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, anchors, docFiles, links, read } from './markdown.js'

/**
 * Every relative link of the README and of docs/ names a file or folder that exists, and a heading
 * or `<a id>` anchor that exists when it names one in a markdown file (GitHub's heading anchors).
 * The generated API reference's own links are checked by api.test.ts.
 */
const files = docFiles()
const anchorsOf = new Map<string, Set<string>>()
function anchorsIn(path: string): Set<string> {
  let found = anchorsOf.get(path)
  if (!found) anchorsOf.set(path, (found = anchors(read(path))))
  return found
}

describe('links between the docs', () => {
  it('covers the README and the docs pages', () => {
    expect(files).toContain('README.md')
    expect(files).toContain(join('docs', 'README.md'))
    expect(files).toContain(join('docs', 'library.md'))
    expect(files.filter((f) => f.startsWith(join('docs', 'api')))).toEqual([])
  })

  for (const file of files) {
    it(`${file}: relative links resolve`, () => {
      const broken: string[] = []
      for (const { target, line } of links(read(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto:, ...
        const hash = target.indexOf('#')
        const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash))
        const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1))
        const resolved = pathPart === '' ? file : normalize(join(dirname(file), pathPart))
        if (resolved.startsWith('..') || !existsSync(join(ROOT, resolved))) {
          broken.push(`${file}:${line}: ${target} (no file ${resolved})`)
          continue
        }
        if (anchor !== undefined && anchor !== '' && statSync(join(ROOT, resolved)).isFile() && resolved.endsWith('.md') && !anchorsIn(resolved).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${resolved})`)
        }
      }
      expect(broken).toEqual([])
    })
  }
})
