import { constants } from 'node:fs'
import { open, readdir } from 'node:fs/promises'
import { extname, join, sep } from 'node:path'
import { PACKAGE_ROOT } from '../package-root.js'

/**
 * The console's static files: packages/adapters/console/, beside src/ and dist/ in the package
 * (the same folder from the workspace's sources and from an installed tarball, bundled or not).
 */
const CONSOLE_DIR = join(PACKAGE_ROOT, 'console') + sep

/** The types served, by extension; a file of any other type is not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
}

/**
 * Pages may load only this origin's scripts, styles, images and connections: no inline script or
 * style, no framing, no plugins, no form posts elsewhere.
 */
const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The headers of every console file (and the content type of each). */
export function staticHeaders(contentType: string, length: number): Record<string, string | number> {
  return {
    'content-type': contentType,
    'content-length': length,
    'cache-control': 'no-cache',
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  }
}

/** A file name as the URL gives it: letters, digits, `.`, `_`, `-`, not starting with a dot (no `..`, no `/`, no `%`). */
const FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/

/** The largest console file read. */
const MAX_FILE_BYTES = 8 * 1024 * 1024

interface StaticFile {
  readonly body: Buffer
  readonly contentType: string
}

/**
 * The console file `name` (the raw, undecoded URL segment), or undefined: only regular files listed
 * in the folder itself, of a type in the table, are read — never a path, an encoded name, a
 * subfolder or a symbolic link (the listing skips links, and the file is opened with O_NOFOLLOW).
 */
export async function readConsoleFile(name: string, dir: string = CONSOLE_DIR): Promise<StaticFile | undefined> {
  if (!FILE_NAME.test(name) || name.includes('..')) return undefined
  const contentType = CONTENT_TYPES[extname(name).toLowerCase()]
  if (contentType === undefined) return undefined
  const listed = await readdir(dir, { withFileTypes: true }).catch(() => [])
  if (!listed.some((entry) => entry.name === name && entry.isFile())) return undefined
  const handle = await open(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined)
  if (!handle) return undefined
  try {
    const stat = await handle.stat()
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return undefined
    return { body: await handle.readFile(), contentType }
  } finally {
    await handle.close()
  }
}
