// Refreshes packages/adapters/protos/ from the pinned `google-proto-files` (a root devDependency):
// the .proto files the gRPC server loads for the services it serves, with everything they import,
// byte for byte in the same folder layout, and the package's LICENSE (Apache-2.0). Files that
// are no longer loaded are removed. test/contract/shipped-protos.test.ts checks the result.
//
//   node --conditions=quarry-source --import tsx scripts/refresh-protos.ts
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { SHIPPED_PROTOS, loadServiceProtos } from '../packages/adapters/src/grpc/protos.js'
import { bindMethods } from '../packages/adapters/src/transport/bound-methods.js'

/** The pinned upstream package's folder, holding `google/...` and its LICENSE. */
export function upstreamProtos(): string {
  return dirname(createRequire(import.meta.url).resolve('google-proto-files/package.json'))
}

/** Every service the gRPC server is asked to serve (grpc/server.ts takes them from the bound methods). */
export function servedServices(): string[] {
  const embedder = createHashingEmbedder({ dimensions: 8 })
  const engines = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
  return [...new Set(bindMethods(engines).map((method) => method.service))]
}

/**
 * The .proto files the server's loader reads from `include` for those services, relative to it
 * with `/` separators, sorted. protobuf.js answers the well-known types it bundles itself: those
 * are not read from the folder and not listed.
 */
export function loadedProtoFiles(include: string): string[] {
  const root = loadServiceProtos(servedServices(), { include })
  return root.files
    .filter((file) => file.startsWith(include + sep))
    .map((file) => relative(include, file).split(sep).join('/'))
    .sort()
}

/** The files under `dir`, relative to it with `/` separators, sorted. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort()
}

function refresh(): void {
  const upstream = upstreamProtos()
  const files = loadedProtoFiles(upstream)
  rmSync(join(SHIPPED_PROTOS, 'google'), { recursive: true, force: true })
  for (const file of files) {
    mkdirSync(dirname(join(SHIPPED_PROTOS, file)), { recursive: true })
    copyFileSync(join(upstream, file), join(SHIPPED_PROTOS, file))
  }
  copyFileSync(join(upstream, 'LICENSE'), join(SHIPPED_PROTOS, 'LICENSE'))
  console.log(`${relative(process.cwd(), SHIPPED_PROTOS)}: ${files.length} .proto files and LICENSE from ${relative(process.cwd(), upstream)}`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) refresh()
