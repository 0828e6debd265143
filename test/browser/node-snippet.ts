import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * What an app using the console's Node snippets installs: Google's client package of each API
 * (docs/rest-server.md). Not google-gax, the clients' own dependency: npm's flat node_modules
 * would let an app import it, pnpm's would not, and either way the app never asked for it.
 */
export const APP_PACKAGES: readonly string[] = ['@google-cloud/aiplatform', '@google-ai/generativelanguage']

/** The bare package names a module's `import ... from '...'` lines name. */
export function importedPackages(code: string): string[] {
  return [...code.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]/gm)].map((m) => (m[1] as string).split('/').slice(0, (m[1] as string).startsWith('@') ? 2 : 1).join('/'))
}

/**
 * Runs Node client code as a person would paste it into an app: a fresh folder whose
 * node_modules holds only the packages of {@link APP_PACKAGES} it imports (each linked to the
 * workspace's copy; their own dependencies resolve from there, not from the app), the code as
 * snippet.mjs. A snippet importing anything else fails here, before it runs.
 */
export async function runNodeSnippet(code: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const imported = importedPackages(code)
  const foreign = imported.filter((name) => !APP_PACKAGES.includes(name))
  if (foreign.length > 0) throw new Error(`the snippet imports ${foreign.join(', ')}, which the app does not install (it installs ${APP_PACKAGES.join(', ')})`)
  const project = mkdtempSync(join(tmpdir(), 'quarry-console-snippet-'))
  try {
    for (const name of new Set(imported)) {
      const at = join(project, 'node_modules', ...name.split('/'))
      mkdirSync(dirname(at), { recursive: true })
      symlinkSync(realpathSync(join(ROOT, 'node_modules', ...name.split('/'))), at, 'dir')
    }
    writeFileSync(join(project, 'snippet.mjs'), `${code}\n`)
    return await new Promise((resolve) => {
      execFile(process.execPath, ['snippet.mjs'], { cwd: project, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      })
    })
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
}
