import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder, writeGeneration, type Embedder, type GenerationFormat } from '@quarry/core'
import { createServer } from '@quarry/adapters'

/**
 * Once CURRENT names a new generation, the write has committed: nothing after the switch (removing
 * the generations it replaces, telling those waiting) may report it as failed. A server that took
 * a failed checkpoint for one that did not commit would drop the log the new checkpoint names and
 * go on appending acknowledged writes to a log no checkpoint names, lost at the next restart.
 */

/**
 * The folder whose removal fails (EBUSY, as a file held open elsewhere makes it on some systems),
 * the folder whose listing fails (EMFILE: no descriptor left), and the folder that cannot be
 * fsynced (EIO, as a failing disk answers) once CURRENT no longer names `replaced`, i.e. after a
 * switch: opening it for its fsync fails; none by default.
 */
const failing = vi.hoisted(() => ({ path: undefined as string | undefined, listing: undefined as string | undefined, sync: undefined as { dir: string; replaced: string } | undefined }))
const busy = (path: unknown): Error => Object.assign(new Error(`EBUSY: resource busy or locked, rm '${String(path)}'`), { code: 'EBUSY' })
const ioError = (path: unknown): Error => Object.assign(new Error(`EIO: i/o error, open '${String(path)}'`), { code: 'EIO' })
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const rmSync: typeof fs.rmSync = (path, options) => {
    if (path === failing.path) throw busy(path)
    fs.rmSync(path, options)
  }
  const readdirSync = ((path: string, options?: unknown) => {
    if (path === failing.listing) throw Object.assign(new Error(`EMFILE: too many open files, scandir '${path}'`), { code: 'EMFILE' })
    return (fs.readdirSync as (p: string, o?: unknown) => unknown)(path, options)
  }) as typeof fs.readdirSync
  const openSync = ((path: string, ...rest: unknown[]) => {
    if (switchedAway(fs, path)) throw ioError(path)
    return (fs.openSync as (p: string, ...r: unknown[]) => number)(path, ...rest)
  }) as typeof fs.openSync
  return { ...fs, rmSync, readdirSync, openSync, default: { ...fs, rmSync, readdirSync, openSync } }
})
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>()
  const sync = await import('node:fs')
  const rm: typeof fs.rm = async (path, options) => {
    if (path === failing.path) throw busy(path)
    return fs.rm(path, options)
  }
  const open = (async (path: string, ...rest: unknown[]) => {
    if (switchedAway(sync, path)) throw ioError(path)
    return (fs.open as (p: string, ...r: unknown[]) => Promise<unknown>)(path, ...rest)
  }) as typeof fs.open
  return { ...fs, rm, open, default: { ...fs, rm, open } }
})
/** Whether `path` is the folder whose fsync fails, and CURRENT there names another generation than `replaced`. */
function switchedAway(fs: Pick<typeof import('node:fs'), 'readFileSync'>, path: unknown): boolean {
  const sync = failing.sync
  if (sync === undefined || path !== sync.dir) return false
  return fs.readFileSync(`${sync.dir}/CURRENT`, 'latin1').trim() !== sync.replaced
}

const root = mkdtempSync(join(tmpdir(), 'quarry-commit-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let count = 0
const scratch = (): string => join(root, `s${count++}`)

/** Creates corpus `name` over REST on the server at `url`; resolves to the HTTP status. */
async function createCorpus(url: string, name: string): Promise<number> {
  return (await fetch(`${url}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) })).status
}

/** The corpora a server started on `dir` serves, in order. */
async function corporaAfterRestart(embedder: Embedder, dir: string): Promise<string[]> {
  const restarted = createServer({ embedder, dataDir: dir })
  const again = await restarted.listen()
  try {
    const listed = (await (await fetch(`${again.url}/v1beta/corpora`)).json()) as { corpora?: { name: string }[] }
    return (listed.corpora ?? []).map((c) => c.name)
  } finally {
    await restarted.close()
  }
}
const generations = (dir: string): string[] => readdirSync(dir).filter((e) => /^snapshot-\d+$/.test(e)).sort()
const currentOf = (dir: string): string => readFileSync(join(dir, 'CURRENT'), 'latin1').trim()
const FORMAT: GenerationFormat = { format: 'quarry-test', version: 1, kind: 'test folder', remedy: 'Remove it.' }

describe('a generation is committed once CURRENT names it', () => {
  it('a replaced generation that cannot be removed, and a waiter that throws, leave the write committed; the next save removes the leftover', () => {
    const dir = scratch()
    const write = (text: string) => writeGeneration(dir, FORMAT, function* (out) {
      const file = out.create('a.txt')
      file.text(text)
      yield* file.finish()
      out.onSettled(() => {
        throw new Error('a waiter that fails')
      })
    })
    expect(write('one')).toBe(1)
    failing.path = join(dir, 'snapshot-000001')
    try {
      expect(write('two')).toBe(2)
    } finally {
      failing.path = undefined
    }
    expect(currentOf(dir)).toBe('snapshot-000002')
    expect(generations(dir)).toEqual(['snapshot-000001', 'snapshot-000002'])
    expect(write('three')).toBe(3)
    expect(generations(dir)).toEqual(['snapshot-000003'])
    expect(readFileSync(join(dir, 'snapshot-000003', 'a.txt'), 'utf8')).toBe('three')
  })

  it('a folder that cannot be listed once CURRENT was switched leaves the write committed', () => {
    const dir = scratch()
    const write = (text: string, failAfter: boolean) => writeGeneration(dir, FORMAT, function* (out) {
      const file = out.create('a.txt')
      file.text(text)
      yield* file.finish()
      // Told right after the switch: from then on, listing the folder fails.
      if (failAfter) out.onSettled(() => void (failing.listing = dir))
    })
    expect(write('one', false)).toBe(1)
    try {
      expect(write('two', true)).toBe(2)
    } finally {
      failing.listing = undefined
    }
    expect(currentOf(dir)).toBe('snapshot-000002')
    expect(readFileSync(join(dir, 'snapshot-000002', 'a.txt'), 'utf8')).toBe('two')
    expect(write('three', false)).toBe(3)
    expect(generations(dir)).toEqual(['snapshot-000003'])
  })

  it('a switch the folder cannot be fsynced after is reported, and the generation before is kept until a save is confirmed', () => {
    const dir = scratch()
    const write = (text: string, options: { onUnconfirmed?: (error: Error) => void } = {}) =>
      writeGeneration(dir, FORMAT, function* (out) {
        const file = out.create('a.txt')
        file.text(text)
        yield* file.finish()
      }, options)
    expect(write('one')).toBe(1)
    failing.sync = { dir, replaced: 'snapshot-000001' }
    try {
      // Without onUnconfirmed the write throws, after its commit, saying what the folder holds.
      expect(() => write('two')).toThrow(expect.objectContaining({ code: 'EIO', message: expect.stringContaining('CURRENT names the save just written (snapshot-000002), but the folder could not be synced after the switch (EIO)') }))
      expect(currentOf(dir)).toBe('snapshot-000002')
      expect(generations(dir)).toEqual(['snapshot-000001', 'snapshot-000002'])
      // With it, the write returns its number and the error goes to the callback.
      const reported: Error[] = []
      failing.sync = { dir, replaced: 'snapshot-000002' }
      expect(write('three', { onUnconfirmed: (error) => reported.push(error) })).toBe(3)
      expect(reported.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['EIO'])
      expect(generations(dir)).toEqual(['snapshot-000001', 'snapshot-000002', 'snapshot-000003'])
    } finally {
      failing.sync = undefined
    }
    // A power loss could leave CURRENT naming any of them: each is whole.
    for (const [name, text] of [['snapshot-000001', 'one'], ['snapshot-000002', 'two'], ['snapshot-000003', 'three']] as const) expect(readFileSync(join(dir, name, 'a.txt'), 'utf8')).toBe(text)
    // The next confirmed save removes them all.
    expect(write('four')).toBe(4)
    expect(generations(dir)).toEqual(['snapshot-000004'])
  })

  it("a server's checkpoint that cannot be confirmed keeps the log before and refuses writes until one is; every acknowledged write survives a power loss either way", async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    const dataDir = scratch()
    const internal: unknown[] = []
    const server = createServer({ embedder, dataDir, onInternalError: (error) => internal.push(error) })
    const { url } = await server.listen()
    const post = async (base: string, path: string, body: unknown): Promise<{ status: number; body: { error?: { status?: string; message?: string } } }> => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return { status: res.status, body: (await res.json()) as { error?: { status?: string; message?: string } } }
    }
    const logs = (dir: string): string[] => readdirSync(dir).filter((e) => /^wal-\d+\.log$/.test(e)).sort()
    /** The folder as a power loss could leave it: CURRENT naming `current` (the switch undone, or kept). */
    const afterPowerLoss = (current: string): string => {
      const copy = scratch()
      cpSync(dataDir, copy, { recursive: true })
      rmSync(join(copy, 'LOCK'), { force: true })
      writeFileSync(join(copy, 'CURRENT'), `${current}\n`)
      return copy
    }
    try {
      expect((await post(url, '/v1beta/corpora', { name: 'corpora/before' })).status).toBe(200)
      await server.flush()
      expect((await post(url, '/v1beta/corpora', { name: 'corpora/during' })).status).toBe(200)
      const replaced = currentOf(dataDir)
      const replacedLogs = logs(dataDir)
      failing.sync = { dir: dataDir, replaced }
      try {
        await expect(server.flush()).rejects.toThrow(/could not be synced after the switch to it \(EIO\): after a power loss the folder may hold the checkpoint before instead, kept with the write-ahead log that follows it\. Writes are refused until a checkpoint is confirmed\./)
        const switched = currentOf(dataDir)
        expect(switched).not.toBe(replaced)
        expect(generations(dataDir)).toContain(replaced)
        for (const log of replacedLogs) expect(logs(dataDir)).toContain(log)
        // A write now could be undone with the switch: refused, saying why (no local path).
        const refused = await post(url, '/v1beta/corpora', { name: 'corpora/refused' })
        expect(refused.status).toBe(503)
        expect(refused.body.error?.status).toBe('UNAVAILABLE')
        expect(refused.body.error?.message).toMatch(/^The data folder could not be synced after the last checkpoint \(EIO\): the write was not applied\./)
        expect(refused.body.error?.message).not.toContain(dataDir)
        // Reads go on, and /readyz stays 200 while it says writes are refused, and why.
        expect((await fetch(`${url}/v1beta/corpora/before`)).status).toBe(200)
        const readiness = await fetch(`${url}/readyz`)
        expect(readiness.status).toBe(200)
        expect(await readiness.json()).toEqual({ ready: true, writes: 'refused', reason: refused.body.error?.message })
        // A power loss now: whichever generation CURRENT names, every acknowledged write is there.
        expect(await corporaAfterRestart(embedder, afterPowerLoss(replaced))).toEqual(['corpora/before', 'corpora/during'])
        expect(await corporaAfterRestart(embedder, afterPowerLoss(switched))).toEqual(['corpora/before', 'corpora/during'])
      } finally {
        failing.sync = undefined
      }
      // The disk answers again: the next checkpoint is confirmed, writes are taken, the kept generations and logs go.
      await server.flush()
      expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ ready: true })
      expect(generations(dataDir)).toEqual([currentOf(dataDir)])
      expect((await post(url, '/v1beta/corpora', { name: 'corpora/after' })).status).toBe(200)
      expect(logs(dataDir)).toHaveLength(1)
      const crashed = scratch()
      cpSync(dataDir, crashed, { recursive: true })
      rmSync(join(crashed, 'LOCK'), { force: true })
      expect(await corporaAfterRestart(embedder, crashed)).toEqual(['corpora/before', 'corpora/during', 'corpora/after'])
    } finally {
      await server.close()
    }
  })

  it('a flush that cannot be confirmed schedules the next try itself; a close meanwhile waits for the running checkpoint and says what the folder holds', async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    const dataDir = scratch()
    const server = createServer({ embedder, dataDir, onInternalError: () => undefined })
    const { url } = await server.listen()
    const post = (name: string): Promise<number> => createCorpus(url, name)
    let closed = false
    try {
      expect(await post('corpora/a')).toBe(200)
      failing.sync = { dir: dataDir, replaced: currentOf(dataDir) }
      await expect(server.flush()).rejects.toThrow(/could not be synced after the switch/)
      expect(await post('corpora/refused')).toBe(503)
      // The disk answers again: no one calls flush, yet writes resume (the next try was scheduled).
      failing.sync = undefined
      await expect.poll(() => post('corpora/b'), { timeout: 10_000, interval: 200 }).toBe(200)
      expect(generations(dataDir)).toEqual([currentOf(dataDir)])
      // A close while a checkpoint runs waits for it: that one cannot be confirmed, nor can close's own.
      expect(await post('corpora/c')).toBe(200)
      failing.sync = { dir: dataDir, replaced: currentOf(dataDir) }
      const flushed = server.flush().then(() => 'confirmed', (error: Error) => error.message)
      await new Promise((resolve) => setImmediate(resolve))
      const closing = server.close().then(() => 'closed', (error: Error) => error.message)
      const [flush, close] = await Promise.all([flushed, closing])
      closed = true
      expect(flush).toMatch(/could not be synced after the switch/)
      // The checkpoint's account, not the lock's release failing on the same folder (EIO, with a path):
      // close's own checkpoint could not be written (the folder cannot be synced before a switch now).
      expect(close).toMatch(/^the last checkpoint could not be written \(EIO\)\. .* holds checkpoint \d+ and the write-ahead log .* with the 0 writes acknowledged after it: nothing acknowledged is lost, the next start replays them\.$/)
      failing.sync = undefined
      // Whichever checkpoint a power loss leaves CURRENT naming, every acknowledged write is there.
      for (const current of generations(dataDir)) {
        const copy = scratch()
        cpSync(dataDir, copy, { recursive: true })
        rmSync(join(copy, 'LOCK'), { force: true })
        writeFileSync(join(copy, 'CURRENT'), `${current}\n`)
        const restarted = createServer({ embedder, dataDir: copy })
        const again = await restarted.listen()
        try {
          const listed = (await (await fetch(`${again.url}/v1beta/corpora`)).json()) as { corpora?: { name: string }[] }
          const names = (listed.corpora ?? []).map((c) => c.name)
          // The oldest kept generation may predate corpora/c's checkpoint: its log then holds it.
          expect(names, current).toEqual(['corpora/a', 'corpora/b', 'corpora/c'])
        } finally {
          await restarted.close()
        }
      }
    } finally {
      failing.sync = undefined
      if (!closed) await server.close()
    }
  })

  it('a checkpoint taken before a logged write (an in-process write came first) that cannot be confirmed is tried again soon: writes resume once the disk answers', async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    const dataDir = scratch()
    const server = createServer({ embedder, dataDir, onInternalError: () => undefined })
    const { url } = await server.listen()
    const post = (name: string): Promise<number> => createCorpus(url, name)
    try {
      expect(await post('corpora/a')).toBe(200)
      const made = await server.engines.semanticRetriever.createCorpus({ corpus: { name: 'corpora/in-process' } })
      expect(made.ok).toBe(true)
      failing.sync = { dir: dataDir, replaced: currentOf(dataDir) }
      expect(await post('corpora/refused')).toBe(503)
      // The disk answers again: the checkpoint is tried within a second or so, not at the next
      // scheduled one (30 s), and writes resume.
      failing.sync = undefined
      await expect.poll(() => post('corpora/b'), { timeout: 10_000, interval: 200 }).toBe(200)
    } finally {
      failing.sync = undefined
      await server.close()
    }
    expect(await corporaAfterRestart(embedder, dataDir)).toEqual(['corpora/a', 'corpora/in-process', 'corpora/b'])
  })

  it('a restart whose first checkpoint cannot be confirmed serves reads, refuses writes until one is, and loses nothing', async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    const dataDir = scratch()
    const first = createServer({ embedder, dataDir })
    const one = await first.listen()
    expect((await fetch(`${one.url}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'corpora/kept' }) })).status).toBe(200)
    // A clean stop's checkpoint names no log: the next start takes a checkpoint of its own.
    await first.close()
    failing.sync = { dir: dataDir, replaced: currentOf(dataDir) }
    const internal: unknown[] = []
    const server = createServer({ embedder, dataDir, onInternalError: (error) => internal.push(error) })
    try {
      const { url } = await server.listen()
      expect((await fetch(`${url}/v1beta/corpora/kept`)).status).toBe(200)
      const post = (name: string): Promise<number> => createCorpus(url, name)
      expect(await post('corpora/refused')).toBe(503)
      expect(String(internal[0])).toMatch(/could not be synced after the switch/)
      failing.sync = undefined
      await expect.poll(() => post('corpora/later'), { timeout: 10_000, interval: 200 }).toBe(200)
    } finally {
      failing.sync = undefined
      await server.close()
    }
    expect(await corporaAfterRestart(embedder, dataDir)).toEqual(['corpora/kept', 'corpora/later'])
  })

  it("a server's checkpoint whose replaced generation cannot be removed keeps the new log: a write acknowledged after it survives a crash", async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    const dataDir = scratch()
    const server = createServer({ embedder, dataDir })
    const { url } = await server.listen()
    const post = async (base: string, path: string, body: unknown): Promise<number> => (await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status
    try {
      expect(await post(url, '/v1beta/corpora', { name: 'corpora/before' })).toBe(200)
      await server.flush()
      expect(await post(url, '/v1beta/corpora', { name: 'corpora/during' })).toBe(200)
      const replaced = currentOf(dataDir)
      failing.path = join(dataDir, replaced)
      try {
        await server.flush()
      } finally {
        failing.path = undefined
      }
      expect(currentOf(dataDir)).not.toBe(replaced)
      expect(existsSync(join(dataDir, replaced))).toBe(true)
      expect(await post(url, '/v1beta/corpora', { name: 'corpora/after' })).toBe(200)
      // The folder as a crash would leave it now: every acknowledged write must come back.
      const crashed = scratch()
      cpSync(dataDir, crashed, { recursive: true })
      rmSync(join(crashed, 'LOCK'), { force: true })
      const restarted = createServer({ embedder, dataDir: crashed })
      const again = await restarted.listen()
      try {
        const listed = (await (await fetch(`${again.url}/v1beta/corpora`)).json()) as { corpora?: { name: string }[] }
        expect((listed.corpora ?? []).map((c) => c.name)).toEqual(['corpora/before', 'corpora/during', 'corpora/after'])
        // Its next checkpoint removes the generation left behind.
        expect(await post(again.url, '/v1beta/corpora', { name: 'corpora/later' })).toBe(200)
        await restarted.flush()
        expect(generations(crashed)).toEqual([currentOf(crashed)])
      } finally {
        await restarted.close()
      }
    } finally {
      await server.close()
    }
  })
})

describe("a server's close", () => {
  const embedder = createHashingEmbedder({ dimensions: 16 })
  const names = async (url: string): Promise<string[]> => (((await (await fetch(`${url}/v1beta/corpora`)).json()) as { corpora?: { name: string }[] }).corpora ?? []).map((c) => c.name)
  const create = async (url: string, name: string): Promise<number> => (await fetch(`${url}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) })).status
  type Options = Omit<Parameters<typeof createServer>[0], 'embedder' | 'dataDir'>
  /** The corpora a server started on `dataDir` serves (then stopped). */
  const namesAfterRestart = async (dataDir: string, options: Options = {}): Promise<string[]> => {
    const again = createServer({ embedder, dataDir, ...options })
    const { url } = await again.listen()
    try {
      return await names(url)
    } finally {
      await again.close()
    }
  }
  /** A server on a new folder holding corpora/a in a confirmed checkpoint, whose folder cannot be synced after the next switch. */
  const failingAfterA = async (options: Options = {}): Promise<{ server: ReturnType<typeof createServer>; url: string; dataDir: string; before: string }> => {
    const dataDir = scratch()
    const server = createServer({ embedder, dataDir, onInternalError: () => undefined, ...options })
    const { url } = await server.listen()
    expect(await create(url, 'corpora/a')).toBe(200)
    await server.flush()
    const before = currentOf(dataDir)
    failing.sync = { dir: dataDir, replaced: before }
    return { server, url, dataDir, before }
  }

  it('called twice waits for the first: the folder is written and let go when either resolves (durability none)', async () => {
    const dataDir = scratch()
    const server = createServer({ embedder, dataDir, durability: 'none' })
    const { url } = await server.listen()
    for (const n of [1, 2, 3]) expect(await create(url, `corpora/c${n}`)).toBe(200)
    const closes = [server.close(), server.close()]
    // Whichever resolves first, the folder is written (durability none writes it at close only) and let go.
    await Promise.race(closes)
    expect(existsSync(join(dataDir, 'CURRENT'))).toBe(true)
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(false)
    await Promise.all(closes)
    expect(await namesAfterRestart(dataDir, { durability: 'none' })).toEqual(['corpora/c1', 'corpora/c2', 'corpora/c3'])
  })

  it('whose last checkpoint cannot be confirmed says what a power loss would cost without a log (durability checkpoint)', async () => {
    const { server, url, dataDir } = await failingAfterA({ durability: 'checkpoint' })
    try {
      // Without a log a write is taken while unconfirmed (its durability already allows losing it).
      expect(await create(url, 'corpora/b')).toBe(200)
      await expect(server.close()).rejects.toThrow(/could not be synced after the switch to it \(EIO\): after a power loss the folder may hold the checkpoint before instead, kept\. Without a power loss before the disk writes it, it holds every write; after one, the writes since the checkpoint before are lost \(durability checkpoint keeps no log\)\./)
    } finally {
      failing.sync = undefined
    }
    expect(await namesAfterRestart(dataDir, { durability: 'checkpoint' })).toEqual(['corpora/a', 'corpora/b'])
  })

  it('whose own checkpoint is not written, after one left unconfirmed, says the writes since are lost (durability checkpoint)', async () => {
    const { server, url, dataDir } = await failingAfterA({ durability: 'checkpoint' })
    try {
      expect(await create(url, 'corpora/b')).toBe(200)
      await expect(server.flush()).rejects.toThrow(/could not be synced after the switch/)
      expect(await create(url, 'corpora/c')).toBe(200)
      // The folder cannot be synced before a switch either now: the last checkpoint is not written.
      const message = await server.close().then(() => 'closed', (error: Error) => error.message)
      expect(message).toMatch(/^the last checkpoint could not be written \(EIO\)\. .* holds checkpoint \d+; the writes since it, kept in memory only \(durability checkpoint\), are lost\.$/)
    } finally {
      failing.sync = undefined
    }
    expect(await namesAfterRestart(dataDir, { durability: 'checkpoint' })).toEqual(['corpora/a', 'corpora/b'])
  })

  it('whose own last checkpoint cannot be confirmed says nothing acknowledged is lost (durability log), and nothing is', async () => {
    const { server, url, dataDir, before } = await failingAfterA()
    try {
      // Taken and logged: nothing is unconfirmed yet.
      expect(await create(url, 'corpora/b')).toBe(200)
      await expect(server.close()).rejects.toThrow(/could not be synced after the switch to it \(EIO\): after a power loss the folder may hold the checkpoint before instead, kept with the write-ahead log that follows it\. Nothing acknowledged is lost either way\.$/)
    } finally {
      failing.sync = undefined
    }
    // As it is, and as a power loss that undid the switch would leave it.
    for (const current of [currentOf(dataDir), before]) {
      const copy = scratch()
      cpSync(dataDir, copy, { recursive: true })
      writeFileSync(join(copy, 'CURRENT'), `${current}\n`)
      expect(await namesAfterRestart(copy), current).toEqual(['corpora/a', 'corpora/b'])
    }
  })
})
