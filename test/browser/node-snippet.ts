import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The folder of an installed package, resolved from `from` (pnpm keeps transitive ones out of the root). */
function packageDir(name: string, from: string): string {
  let dir = dirname(createRequire(join(from, 'noop.js')).resolve(name))
  while (!dir.endsWith(join('node_modules', ...name.split('/')))) dir = dirname(dir)
  return realpathSync(dir)
}

/**
 * Runs Node client code as a person would paste it into an app that depends on Google's clients
 * (and google-gax, which npm's flat node_modules exposes): a fresh folder, the code as snippet.mjs.
 */
export async function runNodeSnippet(code: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const project = mkdtempSync(join(tmpdir(), 'quarry-console-snippet-'))
  try {
    const aiplatform = realpathSync(join(ROOT, 'node_modules/@google-cloud/aiplatform'))
    const links: [string, string][] = [
      ['@google-cloud/aiplatform', aiplatform],
      ['@google-ai/generativelanguage', realpathSync(join(ROOT, 'node_modules/@google-ai/generativelanguage'))],
      ['google-gax', packageDir('google-gax', aiplatform)],
    ]
    for (const [name, target] of links) {
      const at = join(project, 'node_modules', ...name.split('/'))
      mkdirSync(dirname(at), { recursive: true })
      symlinkSync(target, at, 'dir')
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
