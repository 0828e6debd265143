import type { Embedder } from '@quarry/core'
import { omitUndefined } from '../rpc/omit.js'
import { createServer as createNetServer } from 'node:net'
import type { RequestLogEntry } from '../http/server.js'
import { createServer } from '../server/server.js'
import { numberOption, optionLines, parseArgs, specOf, type OptionDoc } from './args.js'
import { createCliEmbedder, embedderKind } from './embedders.js'
import { CliError, usageError } from './fail.js'
import { quarryCommand } from './invocation.js'
import { checkCredentialsOut, writeServeCredentials } from './credentials.js'
import { loadPlugin } from './plugin-module.js'
import type { FactExtractor } from '../memory-bank/options.js'
import type { GenerativeModel } from '../generative/model.js'

function usage(): string {
  return `usage: ${quarryCommand()} serve [--port N] [--host 127.0.0.1] [--data DIR] [--gcs-root DIR] [--import-root DIR]...
                    [--allowed-host NAME]... [--cors-origin ORIGIN]... [--embedder glove|hashing] [--max-body-mb N] [--log]
                    [--credentials-out FILE] [--grpc-port N] [--durability log|checkpoint|none] [--max-in-flight N]
                    [--checkpoint-mb N] [--checkpoint-seconds N] [--no-console] [--extractor MODULE]
                    [--model MODULE] [--accept-log-loss] [--max-inflated-mb N] [--max-pages N] [--file-timeout-s N]
                    [--max-event-streams N] [--body-timeout-seconds N] [--send-timeout-seconds N]

  Serves Google's REST APIs locally: Semantic Retriever (/v1beta/corpora...), Vertex AI RAG Engine
  (/v1 and /v1beta1 .../ragCorpora, :retrieveContexts) and Memory Bank (/v1beta1 .../memories);
  with --grpc-port, the same services over gRPC too; the console (a web page: what the engines hold,
  a query playground with every score explained) at / on the same port. GET /readyz answers 200
  once the server is ready (503 while --data's log is replayed).
${optionLines(SERVE_OPTIONS)}`
}

/** The options of `quarry serve`: its parser and its help. */
export const SERVE_OPTIONS: readonly OptionDoc[] = [
  { name: 'port', value: 'N', help: 'port to listen on (default 8080; 0 picks a free one)' },
  { name: 'host', value: 'ADDRESS', help: 'address to bind (default 127.0.0.1: this machine only)' },
  { name: 'data', value: 'DIR', help: 'keep state in DIR; without it, state is in memory' },
  {
    name: 'durability',
    value: 'MODE',
    help: 'with --data, what an answered write survives: log (default: every write is in a\nwrite-ahead log on disk before it is answered; a crash loses nothing answered),\ncheckpoint (snapshots 200 ms after changes; a crash loses the writes since the last),\nnone (written at a clean stop only)',
  },
  { name: 'checkpoint-mb', value: 'N', help: 'with durability log: take a checkpoint (a whole snapshot; the log starts\nempty) once the log holds N MB (default 64); fewer checkpoints, longer restarts' },
  { name: 'checkpoint-seconds', value: 'N', help: 'with durability log: take a checkpoint N seconds after the first write since\nthe last one (default 30)' },
  { name: 'accept-log-loss', help: "with --data: start even when the write-ahead log is missing or damaged (refused\notherwise, saying what would be lost): replays what can be read, keeps the log aside" },
  { name: 'max-in-flight', value: 'N', help: 'requests held at once, REST and gRPC together (default 256); more get 429' },
  { name: 'max-event-streams', value: 'N', help: "the console's event streams open at once (default 32; they hold no request slot);\nmore get 429" },
  { name: 'body-timeout-seconds', value: 'N', help: 'a request body that sends nothing for N seconds ends with 408 (default 5)' },
  { name: 'send-timeout-seconds', value: 'N', help: 'a response the client reads none of for N seconds closes its connection (gRPC:\nresets its stream) (default 10)' },
  { name: 'gcs-root', value: 'DIR', help: 'folder standing in for Cloud Storage: gs://bucket/path reads DIR/bucket/path' },
  { name: 'import-root', value: 'DIR', repeatable: true, help: 'a folder file:// imports may read (repeatable); without one, file:// imports are refused' },
  { name: 'allowed-host', value: 'NAME', repeatable: true, help: 'answer requests for this host name too (repeatable; .example.com: and its\nsubdomains); by default only localhost and IP addresses (against DNS rebinding)' },
  { name: 'cors-origin', value: 'ORIGIN', repeatable: true, help: 'let web pages of this origin call the server, e.g. http://localhost:5173\n(repeatable; * for any); by default pages of other origins get 403' },
  { name: 'embedder', value: 'glove|hashing', help: 'glove (default: offline GloVe SIF, 100-d) or hashing (instant, word overlap only)' },
  { name: 'max-body-mb', value: 'N', help: 'largest request body (default 32)' },
  { name: 'max-inflated-mb', value: 'N', help: "what one uploaded or imported file may expand to: a PDF's streams inflated, any\nfile's text (default 64); a file over it fails alone" },
  { name: 'max-pages', value: 'N', help: 'pages of one PDF, at most (default 2000); a file over it fails alone' },
  { name: 'file-timeout-s', value: 'N', help: "seconds to extract and chunk one file (default 60); PDFs and files over 256 KB\nare read on a thread of their own, stopped at this limit (the file fails alone)" },
  { name: 'log', help: 'print one line per request: method, path, status, milliseconds' },
  { name: 'no-console', help: 'do not serve the console (then / and /console/ answer 404, as any unknown path)' },
  { name: 'credentials-out', value: 'FILE', help: "once listening, write application-default credentials for Google's SDKs to FILE\n(mode 0600; GOOGLE_APPLICATION_CREDENTIALS=FILE; `quarry credentials` shows how)" },
  {
    name: 'extractor',
    value: 'MODULE',
    help: "an ES module whose default export (or export named extractor) turns a conversation\ninto facts for memories:generate (docs/memory-bank.md); by default a local stand-in\nkeeps the user's first-person statements",
  },
  {
    name: 'model',
    value: 'MODULE',
    help: 'an ES module whose default export (or export named model) answers generateContent after\nthe retrieval tool ran (docs/generate-content.md); by default a labelled local model\nquotes the retrieved contexts',
  },
  { name: 'grpc-port', value: 'N', help: "also serve gRPC (plaintext HTTP/2, as Cloud emulators do) on port N, same host and\nstate (0 picks a free one); Google's clients reach it with an endpoint, a port and\ninsecure credentials" },
]

/** An access-log line: `GET /v1beta/corpora 200 1.2ms`. */
function requestLine(entry: RequestLogEntry): string {
  return `${entry.method} ${entry.path} ${entry.status} ${entry.ms.toFixed(1)}ms`
}

/** A failure to listen as one line saying what to pass instead. */
function bindFailure(error: unknown, port: number, host: string): unknown {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE') return new CliError(`port ${port} is in use; pass --port N (another port, or 0 for any free one)`)
  if (code === 'EACCES') return new CliError(`port ${port} needs privileges on this machine; pass --port N above 1023`)
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new CliError(`cannot listen on ${host}: not an address of this machine; pass --host 127.0.0.1 or one of its addresses`)
  return error
}

/** Binds the port for a moment and lets it go: fails as {@link bindFailure} when it cannot. */
async function probe(port: number, host: string): Promise<void> {
  const socket = createNetServer()
  await new Promise<void>((resolve, reject) => {
    socket.once('error', (error) => reject(bindFailure(error, port, host)))
    socket.listen(port, host, () => socket.close(() => resolve()))
  })
}

/**
 * Embeds a few words once, so that the first request does not pay the embedder's set-up (GloVe's
 * vectors, the analyzer's model and tables). A failure is not the start's: the first request that
 * embeds reports it (INTERNAL), as it would without this.
 */
async function warmEmbedder(embedder: Embedder): Promise<void> {
  try {
    await embedder.embed(['warm up the embedder'])
  } catch {
    // Reported by the first request that embeds.
  }
}

/**
 * How long the start took, from the process's start (Node's `performance.now()` counts from it) to
 * this line, and how much of it reading --data's checkpoint took: the rest is Node, the modules,
 * the log's replay and the ports (bench/suites/startup.ts reads this line).
 */
function startupLine(openedMs: number, withData: boolean): string {
  const s = (ms: number): string => (ms / 1000).toFixed(3)
  return `started in ${s(performance.now())} s${withData ? ` (the checkpoint of --data read in ${s(openedMs)} s)` : ''}`
}

/**
 * `quarry serve`: runs until SIGINT / SIGTERM (or `options.signal` aborts), then writes a last
 * snapshot (with --data); resolves to the exit code.
 */
export async function runServe(args: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number> {
  const help = usage()
  const flags = parseArgs(args, specOf(SERVE_OPTIONS, false), help)
  if (flags.has('help')) {
    console.log(help)
    return 0
  }
  const port = numberOption(flags, 'port', { min: 0, max: 65535, integer: true, fallback: 8080 }, help)
  const host = flags.value('host') ?? '127.0.0.1'
  const kind = embedderKind(flags.value('embedder'), help)
  const maxBodyMb = numberOption(flags, 'max-body-mb', { min: 0, max: 4096, integer: false, fallback: 32 }, help)
  if (maxBodyMb === 0) throw usageError('--max-body-mb must be above 0', help)
  const grpcPort = flags.value('grpc-port') !== undefined ? numberOption(flags, 'grpc-port', { min: 0, max: 65535, integer: true, fallback: 0 }, help) : undefined
  if (grpcPort !== undefined && grpcPort !== 0 && grpcPort === port) throw usageError('--grpc-port must differ from --port (REST and gRPC listen side by side)', help)
  const dataDir = flags.value('data')
  const durability = flags.value('durability')
  if (durability !== undefined && durability !== 'log' && durability !== 'checkpoint' && durability !== 'none') throw usageError(`--durability is log, checkpoint or none; received ${durability}`, help)
  if (durability !== undefined && dataDir === undefined) throw usageError('--durability needs --data DIR (without it, state is in memory)', help)
  if (flags.has('accept-log-loss') && dataDir === undefined) throw usageError('--accept-log-loss needs --data DIR (the folder whose log it accepts losing)', help)
  const checkpointMb = flags.value('checkpoint-mb') === undefined ? undefined : numberOption(flags, 'checkpoint-mb', { min: 0.001, max: 1_000_000, integer: false, fallback: 64 }, help)
  const checkpointSeconds = flags.value('checkpoint-seconds') === undefined ? undefined : numberOption(flags, 'checkpoint-seconds', { min: 0.001, max: 10_000_000, integer: false, fallback: 30 }, help)
  const maxInFlight = flags.value('max-in-flight') === undefined ? undefined : numberOption(flags, 'max-in-flight', { min: 1, max: 1_000_000, integer: true, fallback: 256 }, help)
  const maxInflatedMb = flags.value('max-inflated-mb') === undefined ? undefined : numberOption(flags, 'max-inflated-mb', { min: 0.001, max: 1_000_000, integer: false, fallback: 64 }, help)
  const maxFilePages = flags.value('max-pages') === undefined ? undefined : numberOption(flags, 'max-pages', { min: 1, max: 1_000_000_000, integer: true, fallback: 2000 }, help)
  const fileTimeoutS = flags.value('file-timeout-s') === undefined ? undefined : numberOption(flags, 'file-timeout-s', { min: 0.001, max: 1_000_000, integer: false, fallback: 60 }, help)
  const maxEventStreams = flags.value('max-event-streams') === undefined ? undefined : numberOption(flags, 'max-event-streams', { min: 1, max: 1_000_000, integer: true, fallback: 32 }, help)
  const bodyTimeoutSeconds = flags.value('body-timeout-seconds') === undefined ? undefined : numberOption(flags, 'body-timeout-seconds', { min: 0.001, max: 3600, integer: false, fallback: 5 }, help)
  const sendTimeoutSeconds = flags.value('send-timeout-seconds') === undefined ? undefined : numberOption(flags, 'send-timeout-seconds', { min: 0.001, max: 3600, integer: false, fallback: 10 }, help)
  const credentialsOut = flags.value('credentials-out')
  if (credentialsOut !== undefined) checkCredentialsOut(credentialsOut, help)
  // A taken port is told at once, before the embedder loads (seconds on a first GloVe run).
  if (port !== 0) await probe(port, host)
  if (grpcPort !== undefined && grpcPort !== 0) await probe(grpcPort, host)
  const embedder = createCliEmbedder(kind)
  const gcsRoot = flags.value('gcs-root')
  const importRoots = flags.all('import-root')
  const extractorPath = flags.value('extractor')
  const extractor = extractorPath === undefined ? undefined : ((await loadPlugin(extractorPath, { flag: '--extractor', exportName: 'extractor', usage: help })) as FactExtractor)
  const modelPath = flags.value('model')
  const model = modelPath === undefined ? undefined : ((await loadPlugin(modelPath, { flag: '--model', exportName: 'model', usage: help })) as GenerativeModel)
  // createServer reads --data's checkpoint (synchronously): timed for the start-up line below.
  const opening = performance.now()
  const server = createServer({
    embedder,
    maxBodyBytes: Math.round(maxBodyMb * 1024 * 1024),
    allowedHosts: flags.all('allowed-host'),
    corsOrigins: flags.all('cors-origin'),
    console: !flags.has('no-console'),
    ...omitUndefined({
      dataDir,
      grpcPort,
      durability,
      maxInFlight,
      maxEventStreams,
      bodyTimeoutMs: bodyTimeoutSeconds === undefined ? undefined : Math.round(bodyTimeoutSeconds * 1000),
      sendTimeoutMs: sendTimeoutSeconds === undefined ? undefined : Math.round(sendTimeoutSeconds * 1000),
      checkpointBytes: checkpointMb === undefined ? undefined : Math.round(checkpointMb * 1024 * 1024),
      snapshotDelayMs: checkpointSeconds === undefined ? undefined : Math.round(checkpointSeconds * 1000),
      acceptLogLoss: flags.has('accept-log-loss') ? true : undefined,
    }),
    ...omitUndefined({ onRequest: flags.has('log') ? (entry: RequestLogEntry) => console.log(requestLine(entry)) : undefined }),
    vertexRag: omitUndefined({
      importRoots,
      gcsRoot,
      maxInflatedBytes: maxInflatedMb === undefined ? undefined : Math.round(maxInflatedMb * 1024 * 1024),
      maxFilePages,
      fileTimeoutMs: fileTimeoutS === undefined ? undefined : Math.round(fileTimeoutS * 1000),
    }),
    ...(extractor === undefined ? {} : { memoryBank: { extractor } }),
    ...omitUndefined({ model }),
  })
  const openedMs = performance.now() - opening
  let url: string
  let boundGrpc: number | undefined
  try {
    ;({ url, grpcPort: boundGrpc } = await server.listen({ port, host }))
  } catch (error) {
    throw bindFailure(error, port, host)
  }
  // A restored folder is there to be searched: its first query should not load the embedder's model.
  if (server.restored) await warmEmbedder(embedder)
  const scope = host === '127.0.0.1' || host === '::1' || host === 'localhost' ? 'loopback only: reachable from this machine alone' : `bound to ${host}: reachable from the network`
  console.log(`Quarry is serving on ${url} (${scope})`)
  if (!flags.has('no-console')) console.log(`  Console             ${url}/  (off with --no-console)`)
  console.log(`  Readiness           ${url}/readyz  (200 now; 503 while a restart replays --data's log)`)
  console.log('  Semantic Retriever  v1beta   /v1beta/corpora...')
  console.log('  Vertex AI RAG       v1, v1beta1  /{v}/projects/*/locations/*:retrieveContexts, .../ragCorpora...')
  console.log('  Memory Bank         v1, v1beta1  /{v}/projects/*/locations/*/reasoningEngines/*/memories..., .../sessions...')
  console.log(`  Agent Engine        v1, v1beta1  /{v}/projects/*/locations/*/reasoningEngines (memories:generate extracts with ${extractor === undefined ? 'the local stand-in, not Gemini; --extractor MODULE for yours' : `the extractor of ${extractorPath ?? ''}`})`)
  console.log(`  generateContent     v1, v1beta1  /{v}/projects/*/locations/*/publishers/*/models/*:generateContent (${model === undefined ? 'the labelled local model; --model MODULE for yours' : `the model of ${modelPath}`})`)
  if (boundGrpc !== undefined) {
    const endpoint = host.includes(':') ? `[${host}]` : host
    console.log(`  gRPC on ${endpoint}:${boundGrpc} (plaintext): Google's clients with { apiEndpoint: '${host}', port: ${boundGrpc}, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }`)
  }
  console.log(`  file:// imports: ${importRoots.length > 0 ? `under ${importRoots.join(', ')}` : 'off (--import-root DIR allows a folder)'}${gcsRoot ? `; gs:// under ${gcsRoot}` : ''}`)
  const kept = { log: 'every write on disk before it is answered', checkpoint: 'snapshots after changes', none: 'written at a clean stop' }[durability ?? 'log']
  const restoredNote = server.restored ? ` (restored${server.replayed > 0 ? `, ${server.replayed} writes replayed from the log` : ''})` : ''
  console.log(`  embedder ${embedder.name}; ${dataDir ? `state in ${dataDir}${restoredNote}, durability ${durability ?? 'log'}: ${kept}` : 'state in memory (pass --data DIR to keep it)'}`)
  console.log(`  ${startupLine(openedMs, dataDir !== undefined)}`)
  if (server.logKeptAside !== undefined) console.log(`  --accept-log-loss: started without the damaged write-ahead log, kept aside as ${server.logKeptAside}`)
  if (credentialsOut !== undefined) console.log(`  ${await writeServeCredentials(server, credentialsOut)}`)
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      options.signal?.removeEventListener('abort', stop)
      // Without a data folder there is nothing to write: the state was in memory only.
      console.log(dataDir ? '\nQuarry: stopping; writing the last snapshot...' : '\nQuarry: stopping (the state was in memory only)...')
      server.close().then(
        () => resolve(0),
        (error: unknown) => {
          // Stopped, but the folder is not what a clean stop leaves: a distinct exit code (docs/cli.md).
          console.error(`quarry serve: stopped, but ${error instanceof Error ? error.message : String(error)}`)
          resolve(EXIT_LAST_CHECKPOINT_FAILED)
        },
      )
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    if (options.signal?.aborted) stop()
    else options.signal?.addEventListener('abort', stop, { once: true })
  })
}

/** The exit code of a stop whose last checkpoint failed (1: could not start, 2: usage). */
const EXIT_LAST_CHECKPOINT_FAILED = 3
