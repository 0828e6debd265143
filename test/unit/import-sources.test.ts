import { execFileSync } from 'node:child_process'
import { linkSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { VertexRagEngine, type Outcome, type VertexRagOptions } from '@quarry/adapters'
import { readSource } from '../../packages/adapters/src/vertex-rag/sources.js'
import { scratchFolders } from '../support/scratch.js'

/**
 * What an import may read: file:// only under the import roots, gs:// only under the Cloud Storage
 * folder, links followed but never out, regular files only, limits applied while walking.
 */
const tmp = scratchFolders('quarry-sources')
const url = (path: string): string => pathToFileURL(path).href
const embedder = createHashingEmbedder({ dimensions: 16 })

interface Imported {
  readonly imported: number
  readonly failed: number
  readonly skipped: number
  readonly failures: readonly string[]
  readonly files: readonly string[]
}

async function setup(options: VertexRagOptions): Promise<{ rag: VertexRagEngine; corpus: string }> {
  const rag = new VertexRagEngine({ embedder, ...options })
  const created = await rag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'c' } })
  if (!created.ok) throw new Error('create')
  return { rag, corpus: created.response.response?.name as string }
}

async function importUris(rag: VertexRagEngine, corpus: string, uris: readonly string[]): Promise<Outcome<Imported>> {
  const op = await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris } } })
  if (!op.ok) return op
  const response = (op.response.response ?? {}) as Record<string, string>
  const metadata = op.response.metadata as { genericMetadata?: { partialFailures?: { message: string }[] } }
  const listed = await rag.v1beta1.listRagFiles({ parent: corpus, pageSize: 100 })
  const files = listed.ok ? (listed.response.ragFiles ?? []).map((f) => f.gcsSource?.uris?.[0] ?? '') : []
  return {
    ok: true,
    response: {
      imported: Number(response.importedRagFilesCount ?? 0),
      failed: Number(response.failedRagFilesCount ?? 0),
      skipped: Number(response.skippedRagFilesCount ?? 0),
      failures: (metadata.genericMetadata?.partialFailures ?? []).map((f) => f.message),
      files,
    },
  }
}

function ok(outcome: Outcome<Imported>): Imported {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.status.message}`)
  return outcome.response
}

function refused(outcome: Outcome<Imported>): { code: number; message: string; field: string | undefined } {
  if (outcome.ok) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.response)}`)
  return { code: outcome.status.code, message: outcome.status.message, field: outcome.status.details?.[0]?.fieldViolations[0]?.field }
}

/** Whether any chunk of the corpus holds the word (the way a leaked file would come back). */
async function retrievable(rag: VertexRagEngine, corpus: string, word: string): Promise<boolean> {
  const answer = await rag.v1beta1.retrieveContexts({ parent: 'projects/p/locations/l', vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: word, ragRetrievalConfig: { topK: 50 } } })
  if (!answer.ok) throw new Error(answer.status.message)
  return (answer.response.contexts?.contexts ?? []).some((c) => (c.text ?? '').includes(word))
}

describe('import sources', () => {
  it('reads file:// only under the import roots; outside them the request is refused before any read', async () => {
    const root = tmp()
    const outside = tmp()
    writeFileSync(join(root, 'in.txt'), 'inside words')
    writeFileSync(join(outside, 'secret.txt'), 'secretword')
    const { rag, corpus } = await setup({ importRoots: [root] })
    expect(ok(await importUris(rag, corpus, [url(join(root, 'in.txt'))]))).toMatchObject({ imported: 1, failed: 0, files: [url(join(root, 'in.txt'))] })
    for (const uri of [url(join(outside, 'secret.txt')), `${url(root)}/../${outside.split('/').pop() as string}/secret.txt`, 'file:///etc/passwd', 'file:///']) {
      const r = refused(await importUris(rag, corpus, [url(join(root, 'in.txt')), uri]))
      expect(r, uri).toMatchObject({ code: 7, field: 'importRagFilesConfig.gcsSource.uris[1]' })
      expect(r.message).toContain('outside the import roots')
    }
    expect(await retrievable(rag, corpus, 'secretword')).toBe(false)
  })

  it('with importRoots [] refuses file:// naming the flag; without the option any path is trusted', async () => {
    const dir = tmp()
    writeFileSync(join(dir, 'a.md'), '# alpha')
    const off = await setup({ importRoots: [] })
    const r = refused(await importUris(off.rag, off.corpus, [url(join(dir, 'a.md'))]))
    expect(r).toMatchObject({ code: 7, field: 'importRagFilesConfig.gcsSource.uris[0]' })
    expect(r.message).toContain('--import-root DIR')
    const trusted = await setup({})
    expect(ok(await importUris(trusted.rag, trusted.corpus, [url(join(dir, 'a.md'))]))).toMatchObject({ imported: 1 })
  })

  it('follows links inside the roots and refuses links that leave them (file:// and gs://), each failing alone', async () => {
    const root = tmp()
    const gcs = tmp()
    const outside = tmp()
    writeFileSync(join(outside, 'secret.txt'), 'secretword')
    mkdirSync(join(root, 'docs'))
    writeFileSync(join(root, 'docs', 'real.txt'), 'realword here')
    symlinkSync(join(root, 'docs', 'real.txt'), join(root, 'docs', 'alias.md'))
    symlinkSync(join(outside, 'secret.txt'), join(root, 'docs', 'escape.txt'))
    symlinkSync(outside, join(root, 'docs', 'escape-dir'))
    mkdirSync(join(gcs, 'bucket'))
    writeFileSync(join(gcs, 'bucket', 'ok.txt'), 'bucketword')
    symlinkSync(join(outside, 'secret.txt'), join(gcs, 'bucket', 'escape.txt'))
    const { rag, corpus } = await setup({ importRoots: [root], gcsRoot: gcs })
    const folder = ok(await importUris(rag, corpus, [url(join(root, 'docs'))]))
    // alias.md is a link to real.txt: the same file, imported once (under the first name walked).
    expect(folder).toMatchObject({ imported: 1, failed: 2 })
    expect(folder.files).toEqual([`${url(join(root, 'docs'))}/alias.md`])
    expect(folder.failures).toEqual([
      `${url(join(root, 'docs'))}/escape-dir: a link that does not lead to a file inside the import roots; not read.`,
      `${url(join(root, 'docs'))}/escape.txt: a link that does not lead to a file inside the import roots; not read.`,
    ])
    const bucket = ok(await importUris(rag, corpus, ['gs://bucket']))
    expect(bucket).toMatchObject({ imported: 1, failed: 1, failures: ['gs://bucket/escape.txt: a link that does not lead to a file inside the Cloud Storage folder; not read.'] })
    expect(refused(await importUris(rag, corpus, ['gs://bucket/../../etc/passwd']))).toMatchObject({ code: 3 })
    expect(await retrievable(rag, corpus, 'secretword')).toBe(false)
    expect(await retrievable(rag, corpus, 'realword')).toBe(true)
    expect(await retrievable(rag, corpus, 'bucketword')).toBe(true)
  })

  it('reads only regular files: a FIFO or a device fails alone at once; the other files import', async () => {
    const root = tmp()
    writeFileSync(join(root, 'a.txt'), 'alpha words')
    execFileSync('mkfifo', [join(root, 'pipe.txt')])
    const { rag, corpus } = await setup({ importRoots: [root, '/dev'] })
    const folder = ok(await importUris(rag, corpus, [url(root)]))
    expect(folder).toMatchObject({ imported: 1, failed: 1, failures: [`${url(root)}/pipe.txt: not a regular file (a device, FIFO or socket); not read.`] })
    const direct = ok(await importUris(rag, corpus, [url(join(root, 'pipe.txt')), 'file:///dev/zero', 'file:///dev/null']))
    expect(direct).toMatchObject({ imported: 0, failed: 3 })
    expect(direct.failures.every((m) => m.endsWith('not a regular file (a device, FIFO or socket); not read.'))).toBe(true)
  })

  it('applies the file size, file count and depth limits while walking', async () => {
    const root = tmp()
    writeFileSync(join(root, 'small.txt'), 'x'.repeat(100))
    writeFileSync(join(root, 'big.txt'), 'y'.repeat(101))
    const sized = await setup({ importRoots: [root], maxFileBytes: 100 })
    expect(ok(await importUris(sized.rag, sized.corpus, [url(root)]))).toMatchObject({ imported: 1, failed: 1, failures: [`${url(root)}/big.txt: 101 bytes; a file takes at most 100 (maxFileBytes).`] })

    const many = tmp()
    for (let i = 0; i < 50; i++) writeFileSync(join(many, `f${String(i).padStart(2, '0')}.txt`), `file ${i}`)
    const counted = await setup({ importRoots: [many], maxImportFiles: 20 })
    const r = refused(await importUris(counted.rag, counted.corpus, [url(many)]))
    expect(r).toMatchObject({ code: 3, field: 'importRagFilesConfig.gcsSource.uris' })
    expect(r.message).toContain('more than 20 files')
    // The same folder named many times is walked once per name but its files count once.
    const repeated = await setup({ importRoots: [many], maxImportFiles: 50 })
    expect(ok(await importUris(repeated.rag, repeated.corpus, Array.from({ length: 10 }, () => url(many))))).toMatchObject({ imported: 50, failed: 0 })

    const deep = tmp()
    let dir = deep
    for (let level = 1; level <= 6; level++) {
      dir = join(dir, `d${level}`)
      mkdirSync(dir)
      writeFileSync(join(dir, `at${level}.txt`), `level ${level}`)
    }
    const depth = await setup({ importRoots: [deep], maxImportDepth: 3 })
    const walked = ok(await importUris(depth.rag, depth.corpus, [url(deep)]))
    expect(walked).toMatchObject({ imported: 2, failed: 1 })
    expect(walked.files).toEqual([`${url(deep)}/d1/at1.txt`, `${url(deep)}/d1/d2/at2.txt`])
    expect(walked.failures).toEqual([`${url(deep)}/d1/d2/d3: folders nest deeper than 3 levels below the imported URI; not read (the maxImportDepth option).`])
  })

  it('stops at a folder link cycle and reports a missing file alone', async () => {
    const root = tmp()
    mkdirSync(join(root, 'a'))
    writeFileSync(join(root, 'a', 'x.txt'), 'cycle words')
    symlinkSync(join(root, 'a'), join(root, 'a', 'loop'))
    const { rag, corpus } = await setup({ importRoots: [root] })
    expect(ok(await importUris(rag, corpus, [url(root), url(join(root, 'missing.txt'))]))).toMatchObject({
      imported: 1,
      failed: 1,
      files: [`${url(root)}/a/x.txt`],
      failures: [`${url(join(root, 'missing.txt'))}: no such file or folder.`],
    })
  })

  it('walks a system folder with unreadable and special entries without failing the request', async () => {
    const { rag, corpus } = await setup({ importRoots: ['/proc/self'], maxFileBytes: 4096, maxImportFiles: 5000, maxImportDepth: 2 })
    const walked = ok(await importUris(rag, corpus, ['file:///proc/self/fdinfo', 'file:///proc/self/root', 'file:///proc/self/status']))
    // root is a link to "/", outside the root; status and the fdinfo entries are read (their sizes
    // say 0) and fail alone for their type. Nothing fails the request.
    expect(walked.failures).toContain('file:///proc/self/root: a link that does not lead to a file inside the import roots; not read.')
    expect(walked.failures).toContain('file:///proc/self/status: unsupported file type "(none)"; Quarry imports .txt, .text, .md, .markdown, .csv, .html, .htm, .json, .pdf.')
    expect(walked.failures.filter((m) => m.startsWith('file:///proc/self/fdinfo/')).length).toBeGreaterThan(2)
    expect(walked).toMatchObject({ imported: 0, failed: walked.failures.length, files: [] })
  })

  it('reads files whose size lies (/proc says 0) up to the limit and no further', async () => {
    const status = { uri: 'file:///proc/self/status', path: '/proc/self/status' }
    const whole = await readSource(status, 1 << 20)
    expect(whole.ok && Buffer.from(whole.bytes).toString('utf8')).toMatch(/^Name:\t/)
    expect(await readSource(status, 10)).toEqual({ ok: false, status: { code: 3, message: 'file:///proc/self/status: larger than 10 bytes; a file takes at most 10 (maxFileBytes).' } })
    const root = tmp()
    execFileSync('mkfifo', [join(root, 'pipe')])
    // Opened without blocking even with no writer, then refused for its type.
    expect(await readSource({ uri: 'file:///pipe', path: join(root, 'pipe') }, 100)).toEqual({ ok: false, status: { code: 3, message: 'file:///pipe: not a regular file; not read.' } })
  })

  it('reads a file byte for byte, alone in its memory: a big one in shared memory, a small one outside Node\'s pool', async () => {
    const root = tmp()
    // Around the 1 MiB line between the two kinds of buffer, and a small file Node's pool would take.
    for (const size of [100, 1024 * 1024 - 1, 1024 * 1024, 3 * 1024 * 1024 + 7]) {
      const bytes = Buffer.alloc(size)
      for (let i = 0; i < size; i++) bytes[i] = (i * 131 + 7) % 251
      writeFileSync(join(root, `f${size}.txt`), bytes)
      const read = await readSource({ uri: `file:///f${size}.txt`, path: join(root, `f${size}.txt`) }, 64 * 1024 * 1024)
      if (!read.ok) throw new Error(read.status.message)
      expect(Buffer.compare(Buffer.from(read.bytes), bytes)).toBe(0)
      expect(read.bytes.byteOffset).toBe(0)
      // analysis.ts moves an ArrayBuffer to another thread, or shares a SharedArrayBuffer: never Node's pool.
      expect(read.bytes.buffer instanceof SharedArrayBuffer).toBe(size + 1 > 1024 * 1024)
      expect(read.bytes.buffer.byteLength).toBe(size + 1)
      // Whatever the reads did not write is zero, not old memory.
      expect(new Uint8Array(read.bytes.buffer)[size]).toBe(0)
    }
  })

  it('refuses a file whose folder was swapped for a link out of the roots between the walk and the read', async () => {
    const root = realpathSync(tmp())
    const outside = realpathSync(tmp())
    mkdirSync(join(root, 'sub'))
    writeFileSync(join(root, 'sub', 'x.txt'), 'inside')
    writeFileSync(join(outside, 'x.txt'), 'secretword')
    const walked = { uri: 'file:///sub/x.txt', path: join(root, 'sub', 'x.txt'), roots: [root] }
    expect(await readSource(walked, 100)).toMatchObject({ ok: true })
    rmSync(join(root, 'sub'), { recursive: true })
    symlinkSync(outside, join(root, 'sub'))
    expect(await readSource(walked, 100)).toEqual({ ok: false, status: { code: 7, message: 'file:///sub/x.txt: it changed into a link that leads outside the roots; not read.' } })
  })

  it('answers a dangling link like one leading out (no oracle of outside paths), and refuses hard links when confined', async () => {
    const root = tmp()
    const outside = tmp()
    writeFileSync(join(outside, 'secret.txt'), 'secretword')
    symlinkSync('/no/such/outside/file', join(root, 'dangling.txt'))
    symlinkSync(join(outside, 'secret.txt'), join(root, 'existing.txt'))
    linkSync(join(outside, 'secret.txt'), join(root, 'hard.txt'))
    const { rag, corpus } = await setup({ importRoots: [root] })
    const walked = ok(await importUris(rag, corpus, [url(root)]))
    expect(walked).toMatchObject({ imported: 0, failed: 3 })
    expect(walked.failures).toEqual([
      `${url(root)}/dangling.txt: a link that does not lead to a file inside the import roots; not read.`,
      `${url(root)}/existing.txt: a link that does not lead to a file inside the import roots; not read.`,
      `${url(root)}/hard.txt: a file with more than one name (a hard link); confined imports read only files with one name, so copy it instead.`,
    ])
    expect(await retrievable(rag, corpus, 'secretword')).toBe(false)
    // A trusted caller (no importRoots) reads hard links like any file.
    const trusted = await setup({})
    expect(ok(await importUris(trusted.rag, trusted.corpus, [url(join(root, 'hard.txt'))]))).toMatchObject({ imported: 1 })
  })

  it('refuses roots that do not exist when the engine is made', () => {
    expect(() => new VertexRagEngine({ embedder, importRoots: ['/no/such/folder'] })).toThrow(/importRoots\[0\]: the folder \/no\/such\/folder does not exist/)
    expect(() => new VertexRagEngine({ embedder, gcsRoot: '/no/such/folder' })).toThrow(/gcsRoot: the folder/)
  })
})
