import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, docFiles, fencedBlocks, read, type FencedBlock } from './markdown.js'

/**
 * The documentation's code blocks marked runnable are run as written, so they stay true:
 *
 * - ```` ```ts runnable ```` or ```` ```js runnable ````: the block is a program of its own. It is
 *   written to a folder of its own in a temporary project whose node_modules link to the
 *   workspace's packages (`@quarry/core`, `@quarry/adapters`: their TypeScript sources, through the
 *   `quarry-source` export condition), and run there with `node --import tsx`, its working
 *   directory that folder. It must exit 0 within the time limit. TypeScript blocks are also
 *   type-checked together (strict, as the workspace).
 * - `serve` after `runnable`: a fresh `quarry serve --port 0 --embedder hashing` is started
 *   first and its address passed as QUARRY_URL (the block reads it, with a default).
 * - A ```` ```text output ```` block right after a runnable block is what it must print.
 *
 * Nothing here reaches the network or needs /work/shared; blocks that use the adapters' default embedder load GloVe from @quarry/glove.
 */

interface Runnable {
  readonly file: string
  readonly block: FencedBlock
  readonly ext: 'ts' | 'js'
  readonly serve: boolean
  readonly output: string | undefined
  readonly dir: string
}

const require = createRequire(import.meta.url)
let project: string
const runnables: Runnable[] = []

for (const file of docFiles()) {
  const blocks = fencedBlocks(read(file))
  blocks.forEach((block, i) => {
    if (block.words[1] !== 'runnable') return
    const lang = block.words[0]
    if (lang !== 'ts' && lang !== 'js') throw new Error(`${file}:${block.line}: runnable blocks are ts or js; this one is ${String(lang)}`)
    const next = blocks[i + 1]
    const between = next ? read(file).split('\n').slice(block.line + block.code.split('\n').length + 1, next.line - 1) : []
    const output = next && next.words[0] === 'text' && next.words[1] === 'output' && between.every((l) => l.trim() === '') ? next.code : undefined
    runnables.push({ file, block, ext: lang, serve: block.words.includes('serve'), output, dir: `${file.replace(/[^\w.-]+/g, '_')}-L${block.line}` })
  })
}

/** A package's folder as the workspace resolves it (pnpm's real path, not the link). */
function packageDir(name: string, from = ROOT): string {
  const req = createRequire(join(from, 'noop.js'))
  let dir = dirname(req.resolve(name))
  while (!dir.endsWith(join('node_modules', ...name.split('/')))) dir = dirname(dir)
  return realpathSync(dir)
}

function link(name: string, target: string): void {
  const at = join(project, 'node_modules', ...name.split('/'))
  mkdirSync(dirname(at), { recursive: true })
  symlinkSync(target, at, 'dir')
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'quarry-docs-'))
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'docs-snippets', private: true, type: 'module' }))
  link('@quarry/core', join(ROOT, 'packages/core'))
  link('@quarry/adapters', join(ROOT, 'packages/adapters'))
  for (const name of ['tsx', 'fast-check', '@types/node', '@google-cloud/aiplatform', '@google-ai/generativelanguage']) link(name, realpathSync(join(ROOT, 'node_modules', name)))
  // Google's clients bring google-gax; npm's flat node_modules lets an app import it, pnpm's does not.
  link('google-gax', packageDir('google-gax', realpathSync(join(ROOT, 'node_modules/@google-cloud/aiplatform'))))
  for (const r of runnables) {
    mkdirSync(join(project, r.dir))
    writeFileSync(join(project, r.dir, `snippet.${r.ext}`), `${r.block.code}\n`)
  }
})

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true })
})

/** Starts `quarry serve` on a free port; resolves to its URL and the process. */
async function serve(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(ROOT, 'packages/adapters/bin/quarry.mjs'), 'serve', '--port', '0', '--embedder', 'hashing'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] })
  let seen = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quarry serve did not start:\n${seen}`)), 60_000)
    const read = (chunk: Buffer): void => {
      seen += chunk.toString()
      const m = /serving on (http:\/\/\S+)/.exec(seen)
      if (m) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    }
    child.stdout?.on('data', read)
    child.stderr?.on('data', read)
    child.on('exit', (code) => reject(new Error(`quarry serve exited with ${String(code)}:\n${seen}`)))
  })
  return { url, child }
}

/** Stops the server (SIGTERM: it writes nothing without --data) and waits for it to exit. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

function run(r: Runnable, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=quarry-source', '--import', 'tsx', `snippet.${r.ext}`], {
      cwd: join(project, r.dir),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

describe('runnable blocks of the documentation', () => {
  it('finds them (the README and every docs/ page with code marks some)', () => {
    const files = new Set(runnables.map((r) => r.file))
    expect(files.has('README.md')).toBe(true)
    expect(runnables.length).toBeGreaterThanOrEqual(10)
  })

  it('checks every output block (each follows a runnable block directly)', () => {
    const orphans: string[] = []
    for (const file of docFiles()) {
      for (const block of fencedBlocks(read(file))) {
        const checked = runnables.some((r) => r.file === file && r.output !== undefined && r.output === block.code && r.block.line < block.line)
        if (block.words[0] === 'text' && block.words[1] === 'output' && !checked) orphans.push(`${file}:${block.line}`)
      }
    }
    expect(orphans).toEqual([])
  })

  for (const r of runnables) {
    it(`${r.file}:${r.block.line} runs${r.output === undefined ? '' : ' and prints what the page shows'}`, async () => {
      const server = r.serve ? await serve() : undefined
      try {
        const result = await run(r, server ? { QUARRY_URL: server.url } : {})
        if (result.code !== 0) throw new Error(`${r.file}:${r.block.line} exited with ${String(result.code)}\n${result.stderr}${result.stdout}`)
        if (r.output !== undefined) expect(result.stdout.trimEnd(), `${r.file}:${r.block.line}: its output block`).toBe(r.output.trimEnd())
      } finally {
        if (server) await stop(server.child)
      }
    })
  }

  it('type-checks the TypeScript blocks (strict, as the workspace)', () => {
    const files = runnables.filter((r) => r.ext === 'ts').map((r) => `${r.dir}/snippet.ts`)
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ extends: join(ROOT, 'tsconfig.base.json'), compilerOptions: { noEmit: true, declaration: false, sourceMap: false }, files }),
    )
    const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' })
    // Errors name the block's folder, e.g. docs_library.md-L12/snippet.ts(3,7): the block at line 12 of docs/library.md, its 3rd line.
    expect(tsc.stdout + tsc.stderr, 'tsc on the TypeScript blocks').toBe('')
    expect(tsc.status).toBe(0)
  })
})
