import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A documentation file shipped inside an installed npm package. */
export interface PackageDoc {
  /** `package/relative/path.md` */
  readonly source: string
  readonly text: string
}

/** node_modules folders above this module and the working directory, plus the global npm install. */
function roots(): string[] {
  const found = new Set<string>()
  for (const start of [dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    for (let dir = start; ; dir = dirname(dir)) {
      const nm = join(dir, 'node_modules')
      if (existsSync(nm)) found.add(realpathSync(nm))
      if (dirname(dir) === dir) break
    }
  }
  const global = resolve(dirname(process.execPath), '..', 'lib', 'node_modules')
  if (existsSync(global)) found.add(realpathSync(global))
  return [...found].sort()
}

/**
 * The README and markdown documentation of every installed npm package (a real corpus present on
 * any machine after `npm install`), deduplicated by real path, in a stable order.
 */
export function packageDocs(): PackageDoc[] {
  const seen = new Set<string>()
  const docs: PackageDoc[] = []
  const stack = roots()
  while (stack.length > 0) {
    const dir = stack.pop() as string
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? 1 : -1))) {
      const path = join(dir, entry.name)
      let real: string
      try {
        real = realpathSync(path)
      } catch {
        continue
      }
      if (seen.has(real)) continue
      seen.add(real)
      let isDir = entry.isDirectory()
      if (entry.isSymbolicLink()) isDir = statSync(real).isDirectory()
      if (isDir) {
        if (entry.name !== '.bin' && entry.name !== 'test' && entry.name !== '__tests__') stack.push(path)
      } else if (/\.(md|markdown)$/i.test(entry.name) && !/^(changelog|history|license)/i.test(entry.name)) {
        const text = readFileSync(real, 'utf8')
        if (text.trim().length < 200 || text.length > 400_000) continue
        const parts = real.split(`${sep}node_modules${sep}`)
        const tail = parts.at(-1) ?? relative(dir, real)
        docs.push({ source: tail.split(sep).join('/'), text })
      }
    }
  }
  // The same package can be installed in several places: keep one copy of each file.
  const unique = new Map<string, PackageDoc>()
  for (const doc of docs.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))) if (!unique.has(doc.source)) unique.set(doc.source, doc)
  return [...unique.values()]
}
