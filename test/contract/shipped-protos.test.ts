import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SHIPPED_PROTOS } from '../../packages/adapters/src/grpc/protos.js'
import { filesUnder, loadedProtoFiles, upstreamProtos } from '../../scripts/refresh-protos.js'

/**
 * @quarry/adapters ships the googleapis protos its gRPC server loads (packages/adapters/protos/),
 * copied from the pinned google-proto-files (a root devDependency only). They cannot drift from
 * it, none is missing (a service whose file is absent would silently become REST-only) and
 * nothing unused ships. `node --conditions=quarry-source --import tsx scripts/refresh-protos.ts`
 * brings them back in line.
 */
describe('the shipped protos', () => {
  const upstream = upstreamProtos()
  const shipped = filesUnder(SHIPPED_PROTOS)
  const closure = loadedProtoFiles(upstream)

  it('are exactly the files the server loads from the pinned package, and its LICENSE', () => {
    expect(shipped).toEqual(['LICENSE', ...closure].sort())
    // The oracle itself: the entry files of the served services and what they import.
    expect(closure).toEqual(expect.arrayContaining(['google/rpc/status.proto', 'google/rpc/error_details.proto', 'google/cloud/aiplatform/v1beta1/vertex_rag_service.proto', 'google/ai/generativelanguage/v1beta/retriever_service.proto', 'google/api/annotations.proto', 'google/protobuf/descriptor.proto']))
    // protobuf.js bundles these well-known types: they are not read from disk.
    expect(closure).not.toContain('google/protobuf/timestamp.proto')
  })

  it('are byte-identical to the pinned upstream files', () => {
    for (const file of shipped) expect(readFileSync(join(SHIPPED_PROTOS, file)).equals(readFileSync(join(upstream, file))), file).toBe(true)
  })

  it('load to the same closure from the package as from upstream', () => {
    expect(loadedProtoFiles(SHIPPED_PROTOS)).toEqual(closure)
  })

  it('are listed in the package files, so npm ships them', () => {
    const manifest = JSON.parse(readFileSync(join(SHIPPED_PROTOS, '..', 'package.json'), 'utf8')) as { files: string[] }
    expect(manifest.files).toContain('protos')
  })
})
