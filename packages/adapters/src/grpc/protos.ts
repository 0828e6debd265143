import * as fs from 'node:fs'
import { join } from 'node:path'
import protobuf from 'protobufjs'
import { PACKAGE_ROOT } from '../package-root.js'

// In the package, protobuf.js is built into Quarry's own modules (scripts/bundle.mjs: so that no
// install script of its runs), where its `require("fs")`, tried at load, fails in an ES module and
// leaves it without a file system: `loadSync` below reads the shipped protos through this one.
// From the sources it finds the same module itself. (@protobufjs/fetch's own copy stays empty in
// the bundle, so the asynchronous `Root.load` would fail there: only `loadSync` is used.)
protobuf.util.fs = fs as unknown as typeof protobuf.util.fs

/**
 * Google's protos, parsed with protobuf.js (with codec.ts, its only importers). The package ships the
 * googleapis .proto files its gRPC server serves and their imports, in `protos/` (copied
 * byte for byte from the pinned `google-proto-files` by scripts/refresh-protos.ts, checked by
 * test/contract/shipped-protos.test.ts). protobuf.js brings its own copy of the well-known types
 * it bundles (any, duration, empty, field_mask, struct, timestamp ...), so those are not shipped.
 */

export type ProtoRoot = protobuf.Root
export type ProtoType = protobuf.Type
type ProtoService = protobuf.Service
export type ProtoWriter = protobuf.Writer

/** A writer of protobuf bytes (grpc/json-wire.ts). */
export const newWriter = (): ProtoWriter => protobuf.Writer.create()

/** The wire type protobuf.js writes a scalar field of this type with (undefined for a message or enum name). */
export const wireTypeOf = (type: string): number | undefined => (protobuf.types.basic as Record<string, number | undefined>)[type]

interface LongStatic {
  fromValue(value: unknown, unsigned?: boolean): protobuf.Long
}

/** An int64 field's value as protobuf.js's `fromObject` makes it (its `util.Long.fromValue`). */
export function longFromValue(value: unknown, unsigned: boolean): protobuf.Long {
  const Long = protobuf.util.Long as unknown as LongStatic | undefined
  if (!Long) throw new Error('protobuf.js has no Long')
  return Long.fromValue(value, unsigned)
}

/** The folder holding `google/...` in the package: what every import in the protos is relative to. */
export const SHIPPED_PROTOS = join(PACKAGE_ROOT, 'protos')

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

interface LoadProtosOptions {
  /**
   * The folder holding `google/...` to read the protos from (the refresh script and the drift
   * test read the pinned upstream package with the same loader).
   * @defaultValue {@link SHIPPED_PROTOS}
   */
  readonly include?: string
}

/**
 * The services' protos (and their imports) in one root, field names in lowerCamelCase as in
 * proto3 JSON. A service whose file the protos do not have is left out (`serviceOf` finds no
 * such service: it is served over REST only).
 */
export function loadServiceProtos(services: readonly string[], options: LoadProtosOptions = {}): ProtoRoot {
  const include = options.include ?? SHIPPED_PROTOS
  const files = new Set(STATUS_FILES)
  for (const service of services) {
    const file = protoFileOf(service)
    if (fs.existsSync(join(include, file))) files.add(file)
  }
  const root = new protobuf.Root()
  root.resolvePath = (_origin, target) => join(include, target)
  root.loadSync([...files], { keepCase: false })
  root.resolveAll()
  return root
}

/** A service of the root, or undefined when the protos do not define it. */
export function serviceOf(root: ProtoRoot, name: string): ProtoService | undefined {
  const found = root.lookup(name)
  return found instanceof protobuf.Service ? found : undefined
}
