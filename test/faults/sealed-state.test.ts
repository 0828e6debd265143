import { spawn } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readLog } from '@quarry/core'
import { QUARRY_BIN, startServe, type ServeProcess } from '../support/quarry-process.js'
import { scratchDir } from '../support/engine-state.js'
import { mountSmallDisk, unmountSmallDisk } from '../support/small-disk.js'
import { aiplatform, grpc } from '../http/google-gax.js'
import { multipartUpload } from '../support/multipart-upload.js'
import { chunkNames } from '../support/chunk-names.js'

/**
 * Issue 41 against the real `quarry serve` process: a damaged write-ahead log is never silent (the
 * start is refused with what would be lost; `--accept-log-loss` starts without it and keeps it
 * aside); a clean stop whose last checkpoint fails exits 3 and says what is on disk; NaN and
 * ±Infinity in Struct values are refused over REST and gRPC and never change type.
 */
const roots: string[] = []
const children: ServeProcess[] = []
afterAll(async () => {
  for (const c of children) await c.kill()
  for (const r of roots) rmSync(r, { recursive: true, force: true })
})

/** Starts `quarry serve`, resolved once it has printed its whole banner (the state line comes after the address). */
const serve = async (args: readonly string[]): Promise<ServeProcess> => {
  const child = await startServe(['--embedder', 'hashing', ...args])
  children.push(child)
  const printed = (out: string): boolean => / {2}embedder [^\n]*\n/.test(out) && (!args.includes('--accept-log-loss') || /kept aside as [^\n]*\n/.test(out))
  while (!printed(child.output())) {
    if (child.child.exitCode !== null) throw new Error(`quarry serve exited: ${child.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return child
}

/** SIGTERM, resolved with the exit code once the process has exited. */
async function stop(server: ServeProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)))
  if (server.child.exitCode !== null) return server.child.exitCode
  server.child.kill('SIGTERM')
  return exited
}

/** `quarry serve` expected to refuse to start: its exit code and output. */
async function refused(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [QUARRY_BIN, 'serve', '--port', '0', '--embedder', 'hashing', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr.on('data', (c: Buffer) => (output += c.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  return { code, output }
}

async function post(base: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await response.arrayBuffer()
  return response.status
}

const DOC = 'corpora/sealed/documents/d'
async function addChunks(base: string, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) expect(await post(base, `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/${prefix}-${i}`, data: { stringValue: `${prefix} chunk ${i}` } })).toBe(200)
}

const range = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}`)

describe('quarry serve --data with a damaged write-ahead log', () => {
  it('refuses a deleted, emptied, 8-byte, cut or changed log with what would be lost; --accept-log-loss starts without it and keeps it aside', async () => {
    // 30 chunks checkpointed by a clean stop, 20 logged writes, then SIGKILL (the setup).
    const image = scratchDir('quarry-sealed-image-')
    roots.push(image)
    const first = await serve(['--data', image])
    expect(await post(first.base, '/v1beta/corpora', { name: 'corpora/sealed' })).toBe(200)
    expect(await post(first.base, '/v1beta/corpora/sealed/documents', { name: DOC })).toBe(200)
    await addChunks(first.base, 'checkpointed', 30)
    expect(await stop(first)).toBe(0)
    const second = await serve(['--data', image])
    await addChunks(second.base, 'logged', 20)
    await second.kill()
    const [logName] = readdirSync(image).filter((e) => /^wal-\d+\.log$/.test(e))
    expect(logName).toBeDefined()
    const log = readFileSync(join(image, logName as string))
    const records = readLog(join(image, logName as string), undefined).records
    expect(records).toHaveLength(20)
    const lastFrame = (records.at(-1)?.length ?? 0) + 12

    const copyWith = (damage: (path: string) => void): string => {
      const copy = scratchDir('quarry-sealed-copy-')
      roots.push(copy)
      cpSync(image, copy, { recursive: true })
      damage(join(copy, logName as string))
      return copy
    }
    const damages: [string, (path: string) => void, RegExp][] = [
      ['deleted', (p) => rmSync(p), /is missing: every write acknowledged after that checkpoint would be lost/],
      ['emptied', (p) => truncateSync(p, 0), /is empty \(its header is gone\): every write acknowledged after that checkpoint would be lost/],
      ['cut to 8 bytes', (p) => truncateSync(p, 8), /holds 8 bytes, less than its own header \(64\): every write acknowledged after that checkpoint would be lost/],
      ['without its last record', (p) => truncateSync(p, log.length - lastFrame), /was cut to \d+ bytes, short of the \d+ sealed: it sealed 20 acknowledged writes after that checkpoint, 1 of which would be lost/],
      [
        'with a byte of its last record changed',
        (p) => {
          const bytes = Buffer.from(log)
          bytes[log.length - 3] = (bytes[log.length - 3] as number) ^ 0x04
          writeFileSync(p, bytes)
        },
        /has damage in record 20 \(byte \d+\), inside its sealed part: it sealed 20 acknowledged writes after that checkpoint, 1 of which would be lost/,
      ],
    ]
    for (const [what, damage, message] of damages) {
      const copy = copyWith(damage)
      const { code, output } = await refused(['--data', copy])
      expect(code, `${what}: ${output}`).toBe(1)
      expect(output, what).toMatch(message)
      expect(output, what).toMatch(/start with --accept-log-loss/)
      expect(output, what).not.toMatch(/serving on/)
    }

    // Accepting the loss of the cut record: the checkpoint and the 19 whole records, the log kept aside.
    const cut = copyWith((p) => truncateSync(p, log.length - lastFrame))
    const accepted = await serve(['--data', cut, '--accept-log-loss'])
    expect(accepted.output()).toMatch(/restored, 19 writes replayed from the log/)
    expect(accepted.output()).toMatch(new RegExp(`kept aside as .*${logName as string}\\.damaged-`))
    expect(await chunkNames(accepted.base, DOC)).toEqual([...range('checkpointed', 30), ...range('logged', 19)])
    const aside = readdirSync(cut).filter((e) => e.startsWith(`${logName as string}.damaged-`))
    expect(aside).toHaveLength(1)
    expect(readFileSync(join(cut, aside[0] as string))).toEqual(log.subarray(0, log.length - lastFrame))
    expect(await stop(accepted)).toBe(0)
    // Once accepted, the folder is whole again: a plain start serves the same.
    const after = await serve(['--data', cut])
    expect(await chunkNames(after.base, DOC)).toEqual([...range('checkpointed', 30), ...range('logged', 19)])
    expect(await stop(after)).toBe(0)

    // The log as the kill left it: all 50 acknowledged chunks.
    const whole = copyWith(() => undefined)
    const restarted = await serve(['--data', whole])
    expect(restarted.output()).toMatch(/restored, 20 writes replayed from the log/)
    expect(await chunkNames(restarted.base, DOC)).toEqual([...range('checkpointed', 30), ...range('logged', 20)])
    expect(await stop(restarted)).toBe(0)
  })
})

describe('an upload of megabytes in the write-ahead log', () => {
  it('is kept as its bytes (no base64), written off the event loop, and replayed whole after SIGKILL', async () => {
    const data = scratchDir('quarry-sealed-upload-')
    roots.push(data)
    const first = await serve(['--data', data])
    const op = (await (await fetch(`${first.base}/v1beta1/projects/p/locations/l/ragCorpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ displayName: 'big' }) })).json()) as { response: { name: string } }
    const corpus = op.response.name
    // 3 MB of words, and a small file after it.
    const big = Array.from({ length: 450_000 }, (_, i) => ['river', 'stone', 'harbor', 'spice', 'desert', 'planet'][(i * 7) % 6]).join(' ')
    for (const [name, text] of [['big.txt', big], ['small.txt', 'the harbor at dawn']] as const) {
      const { body, contentType } = multipartUpload(name, Buffer.from(text))
      const res = await fetch(`${first.base}/upload/v1beta1/${corpus}/ragFiles:upload`, { method: 'POST', headers: { 'content-type': contentType }, body })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    }
    const observe = async (base: string): Promise<unknown[]> => [
      await (await fetch(`${base}/v1beta1/${corpus}/ragFiles`)).json(),
      await (await fetch(`${base}/v1beta1/projects/p/locations/l:retrieveContexts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'harbor desert', ragRetrievalConfig: { topK: 5 } } }) })).json(),
    ]
    const before = await observe(first.base)
    await first.kill()
    // The log holds the upload's bytes as they came: base64 would be a third larger than the text.
    const log = readdirSync(data).find((f) => /^wal-\d+\.log$/.test(f)) as string
    expect(readFileSync(join(data, log)).indexOf(Buffer.from(big.slice(0, 4096)))).toBeGreaterThan(0)
    const second = await serve(['--data', data])
    expect(second.output()).toMatch(/3 writes replayed from the log/)
    expect(await observe(second.base)).toEqual(before)
    expect(await stop(second)).toBe(0)
  })
})

// A small tmpfs for the last checkpoint to fail on.
const diskRoot = scratchDir('quarry-sealed-disk-')
roots.push(diskRoot)
const disk = mountSmallDisk(diskRoot, 'last-checkpoint test')
afterAll(() => unmountSmallDisk(disk))

describe.skipIf(disk === undefined)('a clean stop whose last checkpoint fails', () => {
  it('exits 3, says the log still holds the acknowledged writes, and the next start replays them', async () => {
    const data = join(disk as string, 'data')
    const server = await serve(['--data', data])
    expect(await post(server.base, '/v1beta/corpora', { name: 'corpora/sealed' })).toBe(200)
    expect(await post(server.base, '/v1beta/corpora/sealed/documents', { name: DOC })).toBe(200)
    await addChunks(server.base, 'kept', 5)
    // The disk fills after the writes were answered: the last checkpoint cannot be written.
    const filler = join(disk as string, 'filler')
    try {
      for (let n = 0; ; n++) writeFileSync(filler, Buffer.alloc(n < 1000 ? 64 * 1024 : 512, 1), { flag: 'a' })
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC')
    }
    expect(await stop(server)).toBe(3)
    expect(server.output()).toMatch(/quarry serve: stopped, but the last checkpoint could not be written \(ENOSPC\)\. .* holds checkpoint 1 and the write-ahead log .*wal-000001\.log with the 7 writes acknowledged after it: nothing acknowledged is lost, the next start replays them\./)
    rmSync(filler)
    const restarted = await serve(['--data', data])
    expect(restarted.output()).toMatch(/restored, 7 writes replayed from the log/)
    expect(await chunkNames(restarted.base, DOC)).toEqual(range('kept', 5))
    expect(await stop(restarted)).toBe(0)
    expect(existsSync(join(data, 'wal-000001.log'))).toBe(false)
  })
})

describe('NaN and Infinity in Struct values', () => {
  it('are refused with INVALID_ARGUMENT naming the field over REST and gRPC; nothing is stored', async () => {
    const server = await serve(['--grpc-port', '0'])
    const parent = 'projects/p/locations/l/reasoningEngines/1'
    // REST: JSON has no NaN, but 1e999 parses to Infinity.
    const rest = await fetch(`${server.base}/v1beta1/${parent}/sessions?sessionId=rest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"userId":"u","sessionState":{"ok":1,"deep":{"list":[2,-1e999]}}}',
    })
    const restJson = (await rest.json()) as { error: { status: string; details: { fieldViolations: { field: string }[] }[] } }
    expect(rest.status).toBe(400)
    expect(restJson.error.status).toBe('INVALID_ARGUMENT')
    expect(restJson.error.details[0]?.fieldViolations.map((v) => v.field)).toEqual(['session.sessionState.deep.list[1]'])

    const client = new aiplatform.v1beta1.SessionServiceClient({ apiEndpoint: '127.0.0.1', port: server.grpcPort as number, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
    try {
      const cases: [object, string][] = [
        [{ numberValue: Number.NaN }, 'session.sessionState.score'],
        [{ numberValue: Number.POSITIVE_INFINITY }, 'session.sessionState.score'],
        [{ structValue: { fields: { list: { listValue: { values: [{ numberValue: 1 }, { numberValue: Number.NEGATIVE_INFINITY }] } } } } }, 'session.sessionState.score.list[1]'],
      ]
      for (const [value, path] of cases) {
        const error = await client.createSession({ parent, sessionId: 'grpc', session: { userId: 'u', sessionState: { fields: { score: value } } } } as Parameters<typeof client.createSession>[0]).then(
          () => undefined,
          (e: unknown) => e as { code: number; details: string; statusDetails?: { fieldViolations?: { field: string }[] }[] },
        )
        expect(error?.code, path).toBe(grpc.status.INVALID_ARGUMENT)
        expect(error?.details, path).toMatch(/a number value must be finite; NaN and Infinity have no JSON form/)
        expect(error?.statusDetails?.[0]?.fieldViolations?.map((v) => v.field), path).toEqual([path])
      }
      // A finite number keeps its type.
      const [op] = await client.createSession({ parent, sessionId: 'finite', session: { userId: 'u', sessionState: { fields: { score: { numberValue: 1.5 } } } } })
      await op.promise()
      const [got] = await client.getSession({ name: `${parent}/sessions/finite` })
      expect(got.sessionState?.fields?.['score']).toMatchObject({ numberValue: 1.5, kind: 'numberValue' })
    } finally {
      await client.close()
    }
    const listed = (await (await fetch(`${server.base}/v1beta1/${parent}/sessions`)).json()) as { sessions?: { name: string }[] }
    expect((listed.sessions ?? []).map((s) => s.name)).toEqual([`${parent}/sessions/finite`])
    expect(await stop(server)).toBe(0)
  })
})
