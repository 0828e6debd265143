import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { getProtoPath } from 'google-proto-files'
import protobuf from 'protobufjs'

/**
 * Google's protos, read at run time from the npm package `google-proto-files` (Google's own
 * copy of googleapis, the same .proto files its Node clients compile), parsed with protobuf.js.
 * The ONLY importer of both. Nothing is copied into this repository.
 */

export type ProtoRoot = protobuf.Root
export type ProtoType = protobuf.Type
export type ProtoService = protobuf.Service

/** The folder holding `google/...`: what every import in the protos is relative to. */
const INCLUDE = dirname(getProtoPath())

/** The .proto file of a service by googleapis' naming: `google.iam.v1.IAMPolicy` → `google/iam/v1/iam_policy.proto`. */
function protoFileOf(service: string): string {
  const dot = service.lastIndexOf('.')
  const name = service
    .slice(dot + 1)
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
  return `${service.slice(0, dot).replaceAll('.', '/')}/${name}.proto`
}

/** The status details Google's clients decode from `grpc-status-details-bin`. */
const STATUS_FILES = ['google/rpc/status.proto', 'google/rpc/error_details.proto']

/**
 * The services' protos (and their imports) in one root, field names in lowerCamelCase as in
 * proto3 JSON. A service whose file the package does not have is left out (`serviceOf` finds no
 * such service: it is served over REST only).
 */
export function loadServiceProtos(services: readonly string[]): ProtoRoot {
  const files = new Set(STATUS_FILES)
  for (const service of services) {
    const file = protoFileOf(service)
    if (existsSync(join(INCLUDE, file))) files.add(file)
  }
  const root = new protobuf.Root()
  root.resolvePath = (_origin, target) => join(INCLUDE, target)
  root.loadSync([...files], { keepCase: false })
  root.resolveAll()
  return root
}

/** A service of the root, or undefined when the protos do not define it. */
export function serviceOf(root: ProtoRoot, name: string): ProtoService | undefined {
  const found = root.lookup(name)
  return found instanceof protobuf.Service ? found : undefined
}
