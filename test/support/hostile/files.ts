import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * The folders a hostile-input run serves imports from, and what lies around them: a Cloud Storage
 * folder and an import root holding ordinary files next to special ones (a FIFO, links to
 * /dev/zero and /proc entries, a link loop, a folder cycle, a file over the size limit, a
 * 40,000-character word, invalid UTF-8), and a secret file outside both, reachable only through
 * links and `..`. Whatever the server reads, the secret's marker word must never come back.
 */
export interface HostileFiles {
  /** The temporary folder holding everything (real path). */
  readonly base: string
  /** gcsRoot: `gs://bucket/...` is read from `<gcs>/bucket/...`. */
  readonly gcs: string
  /** The one import root (file://). */
  readonly imports: string
  /** The secret file, outside both roots. */
  readonly secretFile: string
  /** The secret files (the file and a Markdown twin in its folder). */
  readonly secretFiles: readonly string[]
  /**
   * Whether a secret file was read since it was made: its access time, set two days back, moves
   * on the first read (relatime, the Linux default). `undefined` where the file system does not
   * keep access times (checked on a canary).
   */
  secretsRead(): boolean | undefined
  /** The word only the secret file holds. */
  readonly marker: string
  /** file:// URIs and gs:// URIs that import ordinary files. */
  readonly goodUris: readonly string[]
  /** URIs that name the secret, special files, links out, traversal: each must fail or be refused. */
  readonly hostileUris: readonly string[]
  /** Files for the closing oracle check, inside the import root (not named by goodUris). */
  readonly oracle: { readonly folderUri: string; readonly files: ReadonlyArray<{ readonly uri: string; readonly text: string }> }
  cleanup(): void
}

/** A word no generated request contains and no fixture but the secret holds. */
export const SECRET_MARKER = 'zebulonquartzmarkerword'

/** The size limit the server is started with: `big.txt` is one byte over it. */
export const MAX_FILE_BYTES = 64 * 1024

export function makeHostileFiles(): HostileFiles {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'quarry-hostile-')))
  const gcs = join(base, 'gcs')
  const imports = join(base, 'imports')
  const secretDir = join(base, 'secret')
  const secretFile = join(secretDir, 'secret.txt')
  for (const d of [gcs, imports, secretDir, join(gcs, 'bucket', 'sub'), join(imports, 'docs', 'nested'), join(imports, 'oracle')]) mkdirSync(d, { recursive: true })
  writeFileSync(secretFile, `top secret: ${SECRET_MARKER} ${SECRET_MARKER}\n`)
  writeFileSync(join(secretDir, 'secret.md'), `# ${SECRET_MARKER}\n`)
  const secretFiles = [secretFile, join(secretDir, 'secret.md')]
  const canary = join(base, 'canary.txt')
  writeFileSync(canary, 'canary')
  const past = Math.floor(Date.now() / 1000) - 2 * 86_400
  for (const f of [...secretFiles, canary]) utimesSync(f, past, past)
  readFileSync(canary)
  const keepsAccessTimes = statSync(canary).atimeMs !== past * 1000

  // Ordinary files.
  writeFileSync(join(imports, 'docs', 'alpha.txt'), 'The desert wind erases tracks in the sand.\n')
  writeFileSync(join(imports, 'docs', 'beta.md'), '# Beta\nRivers carve canyons over long years.\n')
  writeFileSync(join(imports, 'docs', 'page.html'), '<html><body><p>Glaciers move slowly &amp; grind rock.</p><script>evil()</script></body></html>')
  writeFileSync(join(imports, 'docs', 'data.json'), JSON.stringify({ topic: 'volcanoes', facts: ['lava cools into basalt'] }))
  writeFileSync(join(imports, 'docs', 'nested', 'deep.csv'), 'name,value\nocean,salt\n')
  writeFileSync(join(gcs, 'bucket', 'ok.txt'), 'Bucket files hold plain words about forests.\n')
  writeFileSync(join(gcs, 'bucket', 'sub', 'inner.md'), '# Inner\nMountains rise where plates collide.\n')

  // Hostile content inside the roots.
  writeFileSync(join(imports, 'docs', 'longword.txt'), 'q'.repeat(40_000))
  writeFileSync(join(imports, 'docs', 'mixedword.txt'), 'ab'.repeat(20_000))
  writeFileSync(join(imports, 'docs', 'invalid-utf8.txt'), Buffer.from([0x61, 0x62, 0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x63]))
  writeFileSync(join(imports, 'docs', 'nul.txt'), Buffer.from('before\u0000after'))
  writeFileSync(join(imports, 'docs', 'comments.html'), '<!--'.repeat(8_000))
  writeFileSync(join(imports, 'docs', 'deep.json'), '['.repeat(20_000) + ']'.repeat(20_000))
  writeFileSync(join(imports, 'docs', 'fake.pdf'), '%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer << /Root 1 0 R /Size 99999999 >>\n%%EOF\n')
  writeFileSync(join(imports, 'big.txt'), 'b'.repeat(MAX_FILE_BYTES + 1))

  // Special files and links, in both roots.
  for (const root of [imports, join(gcs, 'bucket')]) {
    execFileSync('mkfifo', [join(root, 'fifo.txt')])
    symlinkSync('/dev/zero', join(root, 'zero.txt'))
    symlinkSync('/proc/self/status', join(root, 'proc-status.txt'))
    symlinkSync('/proc/self/environ', join(root, 'environ.txt'))
    symlinkSync('/proc/self/root', join(root, 'proc-root'))
    symlinkSync(secretFile, join(root, 'link-secret.txt'))
    symlinkSync(secretDir, join(root, 'link-secret-dir'))
    symlinkSync('../'.repeat(root === imports ? 1 : 2) + 'secret/secret.txt', join(root, 'relative-secret.txt'))
    symlinkSync('loop.txt', join(root, 'loop.txt'))
    symlinkSync('.', join(root, 'cycle'))
  }
  symlinkSync(join(gcs, '..'), join(gcs, 'bucket', 'link-up'))

  const oracleTexts = ['Copper wires carry electric current.', 'Copper kettles boil water quickly.', 'Granite counters resist heat.']
  const oracleFiles = oracleTexts.map((text, i) => {
    const path = join(imports, 'oracle', `o${i}.txt`)
    writeFileSync(path, text)
    return { uri: pathToFileURL(path).href, text }
  })

  const file = (p: string): string => pathToFileURL(p).href
  const rel = (p: string): string => `file://${p}`
  const secretRel = secretFile.slice(1)
  return {
    base,
    gcs,
    imports,
    secretFile,
    secretFiles,
    secretsRead: () => (keepsAccessTimes ? secretFiles.some((f) => statSync(f).atimeMs !== past * 1000) : undefined),
    marker: SECRET_MARKER,
    goodUris: [
      file(join(imports, 'docs', 'alpha.txt')),
      file(join(imports, 'docs')),
      `${file(join(imports, 'docs'))}/`,
      file(join(imports, 'docs', 'beta.md')),
      file(imports),
      'gs://bucket/ok.txt',
      'gs://bucket',
      'gs://bucket/sub/',
      'gs://bucket/sub/inner.md',
    ],
    hostileUris: [
      file(secretFile),
      `file:///../../../..${secretFile}`,
      `file:///${'../'.repeat(12)}${secretRel}`,
      rel(`${imports}/../secret/secret.txt`),
      rel(`${imports}/%2e%2e/secret/secret.txt`),
      rel(`${imports}/%2E%2E%2Fsecret%2Fsecret.txt`),
      rel(`${imports}/..%2fsecret%2fsecret.txt`),
      rel(`${imports}/docs/../../secret/secret.txt`),
      rel(`${imports}/link-secret.txt`),
      rel(`${imports}/relative-secret.txt`),
      rel(`${imports}/link-secret-dir/secret.txt`),
      rel(`${imports}/link-secret-dir`),
      rel(`${imports}/fifo.txt`),
      rel(`${imports}/zero.txt`),
      rel(`${imports}/proc-status.txt`),
      rel(`${imports}/environ.txt`),
      rel(`${imports}/proc-root`),
      rel(`${imports}/proc-root${secretFile}`),
      rel(`${imports}/loop.txt`),
      rel(`${imports}/cycle`),
      rel(`${imports}/cycle/cycle/cycle/docs/alpha.txt`),
      rel(`${imports}/big.txt`),
      rel(`${imports}/docs/longword.txt`),
      rel(`${imports}/docs/mixedword.txt`),
      rel(`${imports}/docs/invalid-utf8.txt`),
      rel(`${imports}/docs/comments.html`),
      rel(`${imports}/docs/deep.json`),
      rel(`${imports}/docs/fake.pdf`),
      rel(`${imports}%00/docs/alpha.txt`),
      rel(`${imports}\u0000/secret`),
      `file://localhost${secretFile}`,
      `file://evil.example${secretFile}`,
      `file:${secretFile}`,
      `FILE://${secretFile}`,
      'file:///etc/passwd',
      'file:///proc/self/environ',
      'file:///proc/self/fd/0',
      'file:///dev/zero',
      'file:///dev/stdin',
      'file:///',
      'file://',
      'file:///%2e%2e/%2e%2e/etc/passwd',
      'gs://bucket/../../secret/secret.txt',
      'gs://b/../../x',
      'gs://bucket/%2e%2e/%2e%2e/secret/secret.txt',
      'gs://bucket/..%2f..%2fsecret%2fsecret.txt',
      'gs://../secret/secret.txt',
      'gs://..',
      'gs://.',
      'gs://bucket/link-secret.txt',
      'gs://bucket/relative-secret.txt',
      'gs://bucket/link-secret-dir',
      'gs://bucket/link-up/secret/secret.txt',
      'gs://bucket/link-up',
      'gs://bucket/fifo.txt',
      'gs://bucket/zero.txt',
      'gs://bucket/proc-status.txt',
      'gs://bucket/environ.txt',
      'gs://bucket/proc-root/etc/passwd',
      'gs://bucket/loop.txt',
      'gs://bucket/cycle',
      'gs:///etc/passwd',
      'gs://bucket\\..\\..\\secret\\secret.txt',
      `gs://bucket/${'a'.repeat(5_000)}`,
      'gs://__proto__/constructor',
      'gs://',
      'http://169.254.169.254/computeMetadata/v1/',
      'https://example.com/x.txt',
      `//${secretFile}`,
      secretFile,
      '../../secret/secret.txt',
    ],
    oracle: { folderUri: file(join(imports, 'oracle')), files: oracleFiles },
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  }
}
