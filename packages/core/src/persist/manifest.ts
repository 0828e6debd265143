import { createHash } from 'node:crypto'

/**
 * `manifest.json` of a generation: what it is (format, version, generation number), every file's
 * size and sha256, and the writer's own fields. The manifest carries its own checksum in an
 * envelope that stays plain JSON:
 *
 *     {"sha256":"<hex of the body's bytes>","manifest":<body>}\n
 *
 * The reader hashes the body's bytes exactly as they lie in the file, so any change to the
 * manifest (a field, a file's checksum, the format) is detected, and through it any change to
 * the files it lists. CURRENT stays the bare generation name, as tools and older readers expect.
 */

/** A file's size and content as a generation's manifest lists them. */
export interface FileSum {
  /** Its size in bytes. */
  readonly bytes: number
  /** The sha256 of its bytes, in lowercase hex. */
  readonly sha256: string
}

export interface Manifest {
  readonly format: string
  readonly version: number
  /** The generation's number (absent in manifests written before checksummed manifests). */
  readonly generation?: number
  readonly files: Readonly<Record<string, FileSum>>
  readonly [field: string]: unknown
}

const HEAD = /^\{"sha256":"([0-9a-f]{64})","manifest":/
const HEAD_LENGTH = '{"sha256":"","manifest":'.length + 64
const TAIL = '}\n'

export function encodeManifest(manifest: Manifest): Buffer {
  return sealManifest(manifest).bytes
}

/** A manifest's file bytes and its seal (the sha256 of its body, written at its head). */
export function sealManifest(manifest: Manifest): { readonly bytes: Buffer; readonly seal: string } {
  const body = Buffer.from(JSON.stringify(manifest), 'utf8')
  const seal = createHash('sha256').update(body).digest('hex')
  return { bytes: Buffer.concat([Buffer.from(`{"sha256":"${seal}","manifest":`, 'latin1'), body, Buffer.from(TAIL, 'latin1')]), seal }
}

/**
 * What a manifest file turned out to be. `legacy`: a bare manifest with no checksum of its own.
 * A sealed one's `seal` (the sha256 of its body) names one generation's exact content (every file's
 * size and sha256), for a later save to reuse its files.
 */
type DecodedManifest =
  | { readonly kind: 'sealed'; readonly manifest: unknown; readonly seal: string }
  | { readonly kind: 'legacy'; readonly manifest: unknown }
  | { readonly kind: 'corrupted' }
  | { readonly kind: 'not-json' }

export function decodeManifest(bytes: Buffer): DecodedManifest {
  const head = HEAD.exec(bytes.subarray(0, HEAD_LENGTH).toString('latin1'))
  if (!head) return parse(bytes) ?? { kind: 'not-json' }
  if (bytes.length < HEAD_LENGTH + TAIL.length || bytes.subarray(bytes.length - TAIL.length).toString('latin1') !== TAIL) return { kind: 'corrupted' }
  const body = bytes.subarray(HEAD_LENGTH, bytes.length - TAIL.length)
  const seal = head[1] as string
  if (createHash('sha256').update(body).digest('hex') !== seal) return { kind: 'corrupted' }
  const parsed = parse(body)
  return parsed === undefined ? { kind: 'corrupted' } : { kind: 'sealed', manifest: parsed.manifest, seal }
}

/** The JSON in `bytes` as a legacy manifest, or undefined when it is not JSON. */
function parse(bytes: Buffer): { readonly kind: 'legacy'; readonly manifest: unknown } | undefined {
  try {
    return { kind: 'legacy', manifest: JSON.parse(bytes.toString('utf8')) as unknown }
  } catch {
    return undefined
  }
}

/** A relative path inside the generation: '/'-separated, no empty, '.' or '..' segment. */
function safeName(name: string): boolean {
  return name !== '' && !name.startsWith('/') && name.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !s.includes('\\') && !s.includes('\0'))
}

/** Checks a parsed manifest's shape; returns what is wrong with it, or undefined. */
export function manifestProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not an object'
  const m = value as Record<string, unknown>
  if (typeof m.format !== 'string' || typeof m.version !== 'number') return 'has no format or version'
  if (m.generation !== undefined && (typeof m.generation !== 'number' || !Number.isSafeInteger(m.generation))) return 'has an invalid generation number'
  const files = m.files
  if (typeof files !== 'object' || files === null || Array.isArray(files)) return 'has no file list'
  for (const [name, sum] of Object.entries(files as Record<string, unknown>)) {
    if (!safeName(name)) return 'lists a file outside its folder'
    const s = sum as Partial<FileSum> | null
    if (typeof s !== 'object' || s === null || typeof s.bytes !== 'number' || !Number.isSafeInteger(s.bytes) || s.bytes < 0 || typeof s.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(s.sha256)) {
      return 'lists a file without a valid size and checksum'
    }
  }
  return undefined
}
