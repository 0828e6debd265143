import { createGloveEmbedder, createHashingEmbedder, QuarryError, type Embedder } from '@quarry/core'
import { createServer } from '../http/server.js'

const HELP = `usage: quarry serve [--port N] [--host 127.0.0.1] [--data DIR] [--gcs-root DIR] [--import-root DIR]...
                    [--allowed-host NAME]... [--cors-origin ORIGIN]... [--embedder glove|hashing] [--max-body-mb N]

  Serves Google's REST APIs locally: Semantic Retriever (/v1beta/corpora...), Vertex AI RAG Engine
  (/v1 and /v1beta1 .../ragCorpora, :retrieveContexts) and Memory Bank (/v1beta1 .../memories).
  --port      port to listen on (default 8080; 0 picks a free one)
  --host      address to bind (default 127.0.0.1: this machine only)
  --data      keep state in DIR (snapshots, written crash-safely); without it, state is in memory
  --gcs-root  folder standing in for Cloud Storage: gs://bucket/path reads DIR/bucket/path
  --import-root  a folder file:// imports may read (repeatable); without one, file:// imports are refused
  --allowed-host  answer requests for this host name too (repeatable; .example.com: and its subdomains);
                  by default only localhost and IP addresses (against DNS rebinding)
  --cors-origin  let web pages of this origin call the server, e.g. http://localhost:5173 (repeatable; * for any);
                 by default pages of other origins get 403
  --embedder  glove (default: offline GloVe SIF, 100-d) or hashing (instant, word overlap only)
  --max-body-mb  largest request body (default 32)`

const REPEATABLE = new Set(['import-root', 'allowed-host', 'cors-origin'])

function parse(args: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string
    if (!a.startsWith('--')) throw new QuarryError('INVALID_OPTION', `unexpected argument "${a}"\n\n${HELP}`)
    const [key, inline] = a.slice(2).split('=', 2) as [string, string | undefined]
    const value = inline ?? args[++i]
    if (value === undefined) throw new QuarryError('INVALID_OPTION', `--${key} needs a value\n\n${HELP}`)
    const values = out.get(key) ?? []
    if (values.length > 0 && !REPEATABLE.has(key)) throw new QuarryError('INVALID_OPTION', `--${key} is given twice\n\n${HELP}`)
    out.set(key, [...values, value])
  }
  return out
}

/** `quarry serve`: runs until SIGINT / SIGTERM, then writes a last snapshot (with --data) and exits. */
export async function runServe(args: readonly string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP)
    return
  }
  const all = parse(args)
  for (const key of all.keys()) {
    if (!['port', 'host', 'data', 'gcs-root', 'import-root', 'allowed-host', 'cors-origin', 'embedder', 'max-body-mb'].includes(key)) throw new QuarryError('INVALID_OPTION', `unknown option --${key}\n\n${HELP}`)
  }
  const flags = { get: (key: string): string | undefined => all.get(key)?.[0] }
  const port = Number(flags.get('port') ?? 8080)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new QuarryError('INVALID_OPTION', `--port must be 0 to 65535; received ${flags.get('port')}.`)
  const host = flags.get('host') ?? '127.0.0.1'
  const kind = flags.get('embedder') ?? 'glove'
  if (kind !== 'glove' && kind !== 'hashing') throw new QuarryError('INVALID_OPTION', `--embedder is glove or hashing; received ${kind}.`)
  const embedder: Embedder = kind === 'glove' ? createGloveEmbedder() : createHashingEmbedder({ dimensions: 256 })
  const maxBodyMb = Number(flags.get('max-body-mb') ?? 32)
  const dataDir = flags.get('data')
  if (!Number.isFinite(maxBodyMb) || maxBodyMb <= 0) throw new QuarryError('INVALID_OPTION', `--max-body-mb must be a positive number; received ${flags.get('max-body-mb')}.`)
  const gcsRoot = flags.get('gcs-root')
  const importRoots = all.get('import-root') ?? []
  const server = createServer({
    embedder,
    maxBodyBytes: Math.round(maxBodyMb * 1024 * 1024),
    allowedHosts: all.get('allowed-host') ?? [],
    corsOrigins: all.get('cors-origin') ?? [],
    ...(dataDir ? { dataDir } : {}),
    vertexRag: { importRoots, ...(gcsRoot ? { gcsRoot } : {}) },
  })
  const { url } = await server.listen({ port, host })
  const scope = host === '127.0.0.1' || host === '::1' || host === 'localhost' ? 'loopback only: reachable from this machine alone' : `bound to ${host}: reachable from the network`
  console.log(`Quarry is serving on ${url} (${scope})`)
  console.log('  Semantic Retriever  v1beta   /v1beta/corpora...')
  console.log('  Vertex AI RAG       v1, v1beta1  /{v}/projects/*/locations/*:retrieveContexts, .../ragCorpora...')
  console.log('  Memory Bank         v1beta1  /v1beta1/projects/*/locations/*/reasoningEngines/*/memories...')
  console.log(`  file:// imports: ${importRoots.length > 0 ? `under ${importRoots.join(', ')}` : 'off (--import-root DIR allows a folder)'}${gcsRoot ? `; gs:// under ${gcsRoot}` : ''}`)
  console.log(`  embedder ${embedder.name}; ${dataDir ? `state in ${dataDir}${server.restored ? ' (restored)' : ''}` : 'state in memory (pass --data DIR to keep it)'}`)
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      console.log('\nQuarry: stopping; writing the last snapshot...')
      server.close().then(resolve, (error: unknown) => {
        console.error(error)
        resolve()
      })
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}
