import { once } from 'node:events'
import { request } from 'node:http'
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'

/** The server's HTTP contract, by plain fetch: routes, errors, limits, encodings, uploads, operations, concurrency. */
let server: QuarryServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function start(options: Parameters<typeof createServer>[0] = {}): Promise<string> {
  server = createServer({ embedder: createHashingEmbedder({ dimensions: 32 }), ...options })
  return (await server.listen()).url
}

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const init: RequestInit = { method, headers: { 'content-type': 'application/json', ...headers } }
  if (body !== undefined) init.body = typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body)
  const res = await fetch(`${url}${path}`, init)
  const text = await res.text()
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown>, text }
}

describe('REST contract', () => {
  it('answers unknown routes, wrong methods, malformed JSON and oversized bodies in Google\'s error shape', async () => {
    const url = await start({ maxBodyBytes: 1000 })
    expect(await call(url, 'GET', '/v1beta/nothing/here')).toMatchObject({ status: 404, json: { error: { code: 404, status: 'NOT_FOUND', message: 'No API serves GET /v1beta/nothing/here.' } } })
    expect(await call(url, 'PUT', '/v1beta/corpora/x')).toMatchObject({ status: 404, json: { error: { code: 404, status: 'NOT_FOUND', message: 'PUT is not allowed on /v1beta/corpora/x (allowed: GET, PATCH, DELETE).' } } })
    const malformed = await call(url, 'POST', '/v1beta/corpora', '{"displayName": ')
    expect(malformed.status).toBe(400)
    expect(malformed.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } })
    expect(String((malformed.json.error as { message: string }).message)).toMatch(/^Invalid JSON payload received in the request body/)
    // A byte that is not UTF-8 (0xE9, "é" in Latin-1) is refused, not stored as U+FFFD; the same text as UTF-8 is stored.
    const latin1 = Uint8Array.from([...Buffer.from('{"displayName":"caf'), 0xe9, ...Buffer.from('"}')])
    expect(await call(url, 'POST', '/v1beta/corpora', latin1)).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: 'Invalid JSON payload received in the request body: it is not valid UTF-8 (send text as UTF-8).' } } })
    expect(await call(url, 'POST', '/v1beta/corpora', Buffer.from('{"displayName":"café"}'))).toMatchObject({ status: 200, json: { displayName: 'café' } })
    // Half of a surrogate pair, escaped, has no UTF-8 form either (gRPC refuses its bytes): refused with where it is.
    // Both halves, or the escaped backslash before "ud800", are text.
    const lone = 'Invalid JSON payload received in the request body: a string at \'displayName\' holds half of a UTF-16 surrogate pair (a \\uD800-\\uDFFF escape without its other half), which is not text (a proto3 string is UTF-8). Send both halves, or the character itself.'
    expect(await call(url, 'POST', '/v1beta/corpora', '{"displayName":"a\\ud800b"}')).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: lone } } })
    expect(await call(url, 'POST', '/v1beta/corpora', '{"displayName":"\\uDC00"}')).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: lone } } })
    expect(await call(url, 'POST', '/v1beta/corpora', '{"displayName":"\\ud83e\\udd80"}')).toMatchObject({ status: 200, json: { displayName: '🦀' } })
    expect(await call(url, 'POST', '/v1beta/corpora', '{"displayName":"\\\\ud800"}')).toMatchObject({ status: 200, json: { displayName: '\\ud800' } })
    expect(await call(url, 'POST', '/v1beta/corpora', { displayName: 'x'.repeat(2000) })).toMatchObject({ status: 413, json: { error: { code: 413, status: 'INVALID_ARGUMENT' } } })
    expect(await call(url, 'POST', '/v1beta/corpora', '[1, 2]')).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT' } } })
    expect(await call(url, 'GET', '/v1beta/corpora/%E0%A4%A')).toMatchObject({ status: 400, json: { error: { code: 400, status: 'INVALID_ARGUMENT' } } })
    // Query keys cannot reach a prototype.
    expect(await call(url, 'GET', '/v1beta/corpora?__proto__.polluted=yes')).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT' } } })
    expect(await call(url, 'GET', '/v1beta/corpora?constructor.prototype.polluted=yes')).toMatchObject({ status: 400 })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    // An encoded "/" stays inside its segment: it cannot turn a corpus path into a document path.
    await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/a' })
    await call(url, 'POST', '/v1beta/corpora/a/documents', { name: 'corpora/a/documents/b' })
    expect(await call(url, 'DELETE', '/v1beta/corpora/a%2Fdocuments%2Fb?force=true')).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT' } } })
    expect((await call(url, 'GET', '/v1beta/corpora/a/documents/b')).status).toBe(200)
    // NOT_FOUND carries its message alone, as Google's does (google/adk-python#833 quotes one: no details).
    expect(await call(url, 'GET', '/v1beta/corpora/x')).toMatchObject({ status: 404, json: { error: { code: 404, message: 'Corpus "corpora/x" not found.', status: 'NOT_FOUND' } } })
    expect((await call(url, 'GET', '/v1beta/corpora/x')).json).toEqual({ error: { code: 404, message: 'Corpus "corpora/x" not found.', status: 'NOT_FOUND' } })
    expect(await call(url, 'POST', '/v1beta/corpora', { nope: 1 })).toMatchObject({ status: 400, json: { error: { message: 'Invalid JSON payload received. Unknown name "nope" at \'corpus\': Cannot find field.' } } })
  })

  it('answers a body over the limit sent without a declared length (chunked) with 413, then closes the connection', async () => {
    const url = new URL(await start({ maxBodyBytes: 1000 }))
    const answer = await new Promise<{ status: number; connection: string | undefined; json: { error: { code: number; status: string; message: string } } }>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: '/v1beta/corpora', method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, json: JSON.parse(text) as never }))
      })
      req.on('error', reject)
      // Three pieces: the limit is passed in the middle of the second.
      req.write(`{"displayName":"${'x'.repeat(600)}`)
      req.write('y'.repeat(900))
      req.end(`"}`)
    })
    expect(answer.status).toBe(413)
    expect(answer.json.error).toMatchObject({ code: 413, status: 'INVALID_ARGUMENT' })
    expect(answer.json.error.message).toMatch(/larger than 1000 bytes \(--max-body-mb, or maxBodyBytes\)/)
    expect(answer.connection).toBe('close')
    // The server still answers, on a new connection.
    expect((await fetch(new URL('/v1beta/corpora', url))).status).toBe(200)
  })

  it('closed while it starts, leaves no gRPC port open', async () => {
    const s = createServer({ embedder: createHashingEmbedder({ dimensions: 32 }), grpcPort: 0 })
    const listening = s.listen().then(
      (bound) => bound,
      (error: unknown) => error,
    )
    await once(s.server, 'listening')
    await s.close()
    const result = await listening
    if (result instanceof Error) expect(result.message).toBe('the server was closed while it started')
    else {
      const port = (result as { grpcPort?: number }).grpcPort as number
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1')
        socket.once('connect', () => (socket.destroy(), resolve(false)))
        socket.once('error', () => resolve(true))
      })
      expect(refused).toBe(true)
    }
  })

  it('binds path, body and query fields; encodes enums as numbers on request; emits int64 as strings', async () => {
    const url = await start()
    await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/c' })
    await call(url, 'POST', '/v1beta/corpora/c/documents', { name: 'corpora/c/documents/d' })
    await call(url, 'POST', '/v1beta/corpora/c/documents/d/chunks', { name: 'corpora/c/documents/d/chunks/k', data: { stringValue: 'hello world' } })
    expect((await call(url, 'GET', '/v1beta/corpora/c/documents/d/chunks/k')).json.state).toBe('STATE_ACTIVE')
    expect((await call(url, 'GET', '/v1beta/corpora/c/documents/d/chunks/k?$alt=json%3Benum-encoding=int')).json.state).toBe(2)
    const patched = await call(url, 'PATCH', '/v1beta/corpora/c?updateMask=displayName', { displayName: 'Renamed', name: 'corpora/ignored-the-path-wins' })
    expect(patched.json).toMatchObject({ name: 'corpora/c', displayName: 'Renamed' })
    expect(await call(url, 'DELETE', '/v1beta/corpora/c')).toMatchObject({ status: 400, json: { error: { status: 'FAILED_PRECONDITION' } } })
    expect(await call(url, 'DELETE', '/v1beta/corpora/c?force=true')).toMatchObject({ status: 200, json: {} })
    const list = await call(url, 'GET', '/v1beta/corpora?pageSize=1')
    expect(list.json).toEqual({})

    const rag = await call(url, 'POST', '/v1beta1/projects/p/locations/l/ragCorpora', { displayName: 'R' })
    expect(rag.json).toMatchObject({ done: true, response: { '@type': 'type.googleapis.com/google.cloud.aiplatform.v1beta1.RagCorpus', displayName: 'R' } })
    const corpus = (rag.json.response as { name: string }).name
    const polled = await call(url, 'GET', `/v1beta1/${rag.json.name as string}`)
    expect(polled.json).toEqual(rag.json)
    const noContent = await call(url, 'POST', `/v1beta1/${corpus}/ragFiles:upload`, { ragFile: { displayName: 'a.txt' } })
    expect(noContent).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT' } } })
    const boundary = 'quarry-boundary'
    const multipart = [
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ ragFile: { displayName: 'notes.md' } })}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.md"\r\nContent-Type: text/markdown\r\n\r\n# Notes\nThe desert wind erases tracks.\r\n`,
      `--${boundary}--\r\n`,
    ].join('')
    const uploaded = await call(url, 'POST', `/upload/v1beta1/${corpus}/ragFiles:upload?$alt=json%3Benum-encoding=int`, multipart, { 'content-type': `multipart/form-data; boundary=${boundary}` })
    expect(uploaded.json).toMatchObject({ ragFile: { displayName: 'notes.md', sizeBytes: '38', ragFileType: 1, fileStatus: { state: 1 } } })
    // A body without its metadata part, or with two files, is refused saying so (not read as metadata, not half taken).
    const part = (name: string, body: string): string => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.md"\r\nContent-Type: text/markdown\r\n\r\n${body}\r\n`
    const upload = (body: string): Promise<{ status: number; json: Record<string, unknown> }> => call(url, 'POST', `/upload/v1beta1/${corpus}/ragFiles:upload`, body, { 'content-type': `multipart/form-data; boundary=${boundary}` })
    expect(await upload(`${part('file', '# Only a file')}--${boundary}--\r\n`)).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: 'A media upload is a multipart body of at most 16 parts: a "metadata" JSON part ({ ragFile, uploadRagFileConfig }) and a "file" part; this one has a single part.' } } })
    expect(await upload(`${multipart.slice(0, multipart.lastIndexOf(`--${boundary}--`))}${part('file', '# A second file')}--${boundary}--\r\n`)).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: 'A media upload is a multipart body of at most 16 parts: a "metadata" JSON part ({ ragFile, uploadRagFileConfig }) and a "file" part; this one has several "file" parts (upload one file per request).' } } })
    // Sixteen parts are an upload (the extra ones unread); thousands of empty parts (each costs an object to list)
    // are none: refused before they are listed.
    expect(await upload(`${`--${boundary}\r\nA: b\r\n\r\n\r\n`.repeat(20_000)}--${boundary}--\r\n`)).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: 'A media upload is a multipart body of at most 16 parts: a "metadata" JSON part ({ ragFile, uploadRagFileConfig }) and a "file" part.' } } })
    const found = await call(url, 'POST', '/v1beta1/projects/p/locations/l:retrieveContexts', { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'desert wind' } })
    expect((found.json.contexts as { contexts: { text: string }[] }).contexts[0]?.text).toBe('# Notes\nThe desert wind erases tracks.')

    const memory = await call(url, 'POST', '/v1beta1/projects/p/locations/l/reasoningEngines/1/memories?memoryId=tea', { fact: 'I like tea', scope: { user_id: 'u' } })
    expect(memory.json).toMatchObject({ done: true, response: { name: 'projects/p/locations/l/reasoningEngines/1/memories/tea' } })
    const short = await call(url, 'POST', '/v1beta1/reasoningEngines/7/memories?memoryId=m', { fact: 'short binding', scope: { user_id: 'u' } })
    expect((short.json.response as { name: string }).name).toBe('reasoningEngines/7/memories/m')
    expect((await call(url, 'GET', '/v1beta1/reasoningEngines/7/memories/m')).json).toMatchObject({ fact: 'short binding' })
    const generated = await call(url, 'POST', '/v1beta1/projects/p/locations/l/reasoningEngines/1/memories:generate?$alt=json%3Benum-encoding=int', { scope: { user_id: 'u' }, directMemoriesSource: { directMemories: [{ fact: 'i like tea' }] } })
    expect((generated.json.response as { generatedMemories: { action: number }[] }).generatedMemories[0]?.action).toBe(2)
  })

  it('answers an internal failure with a bare INTERNAL, never a stack trace', async () => {
    const errors: unknown[] = []
    const broken: Embedder = { name: 'broken', dimensions: 4, embed: async () => { throw new Error('secret detail at /srv/model.bin') } }
    const url = await start({ embedder: broken, onInternalError: (e) => errors.push(e) })
    await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/c' })
    await call(url, 'POST', '/v1beta/corpora/c/documents', { name: 'corpora/c/documents/d' })
    const res = await call(url, 'POST', '/v1beta/corpora/c/documents/d/chunks', { data: { stringValue: 'x' } })
    expect(res.status).toBe(500)
    expect(res.json).toEqual({ error: { code: 500, message: 'The embedder "broken" failed; nothing was written. Retry the request.', status: 'INTERNAL' } })
    expect(res.text).not.toMatch(/secret|\/srv|\bat\s/)
    expect(errors.length).toBe(1)
  })

  it('runs queries while an ingest is under way, and loses nothing', async () => {
    const base = createHashingEmbedder({ dimensions: 32 })
    let release: () => void = () => undefined
    const gate = new Promise<void>((r) => (release = r))
    // The first big batch waits on the gate: the ingest is provably in flight while queries run.
    const slow: Embedder = { name: base.name, dimensions: base.dimensions, embed: async (texts) => { if (texts.length > 10) await gate; return base.embed(texts) } }
    const url = await start({ embedder: slow })
    await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/c' })
    await call(url, 'POST', '/v1beta/corpora/c/documents', { name: 'corpora/c/documents/d' })
    await call(url, 'POST', '/v1beta/corpora/c/documents/d/chunks', { name: 'corpora/c/documents/d/chunks/first', data: { stringValue: 'desert spice' } })
    const ingest = call(url, 'POST', '/v1beta/corpora/c/documents/d/chunks:batchCreate', { requests: Array.from({ length: 50 }, (_, i) => ({ chunk: { data: { stringValue: `desert passage ${i}` } } })) })
    const during = await Promise.all(Array.from({ length: 8 }, () => call(url, 'POST', '/v1beta/corpora/c:query', { query: 'desert' })))
    for (const q of during) expect((q.json.relevantChunks as { chunk: { name: string } }[]).map((r) => r.chunk.name)).toEqual(['corpora/c/documents/d/chunks/first'])
    release()
    expect((await ingest).status).toBe(200)
    const after = await call(url, 'POST', '/v1beta/corpora/c:query', { query: 'desert', resultsCount: 100 })
    expect((after.json.relevantChunks as unknown[]).length).toBe(51)
  })
})
