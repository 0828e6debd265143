import { isPlainObject, setOwn } from './json-object.js'
import type { FieldType, MessageType } from './proto-json.js'
import { invalidArgument } from './status.js'

/**
 * Update masks (google.protobuf.FieldMask, AIP-161), in one place. "The implementation of any API
 * method which has a FieldMask type field in the request should verify the included field paths,
 * and return an INVALID_ARGUMENT error if any path is unmappable" (field_mask.proto). A path is
 * mappable when it walks the resource's schema:
 * - each name is a field of the message it is in, and only a message has fields inside it: a path
 *   ends at a string, a number, a list ("A repeated field is not allowed except at the last
 *   position of a paths string"), a Duration or a Timestamp;
 * - a map field may be followed by one key ("Field masks may permit the specification of specific
 *   fields in a map, if and only if the map's keys are either strings or integers", AIP-161), and
 *   by a path inside its value when that is a message;
 * - a message Quarry keeps as JSON (`opaque`: ReasoningEngine.spec, which Google's SDK updates as
 *   `spec.package_spec.pickle_object_gcs_uri`) may be walked by the names of its JSON objects.
 * Errors name `updateMask.paths[i]`.
 */

/** What an update lets its mask name. */
export interface MaskRules {
  /** The resource's top-level fields an update may name. */
  readonly updatable: readonly string[]
  /** Top-level fields that never change, each with the message that says so. */
  readonly immutable?: Readonly<Record<string, string>>
  /**
   * Whether a path may reach inside a field (`contextSpec.memoryBankConfig.ttlConfig`,
   * `labels.team`): the update merges path by path with {@link mergeMaskPath}. Otherwise each path
   * names a whole field.
   */
  readonly subPaths: boolean
}

function what(type: FieldType): string {
  switch (type.t) {
    case 'repeated':
      return 'a list'
    case 'map':
      return 'a map'
    case 'duration':
      return 'a Duration'
    case 'timestamp':
      return 'a Timestamp'
    case 'fieldMask':
      return 'a FieldMask'
    case 'enum':
      return 'an enum'
    case 'message':
    case 'opaque':
      return `a ${type.name}`
    case 'string':
      return 'a string'
    case 'bool':
      return 'a boolean'
    default:
      return 'a number'
  }
}

/** Why `rest` cannot be walked inside the field of `type` at `at`, or undefined when it can. */
function unmappable(type: FieldType, at: string, rest: readonly string[]): string | undefined {
  const [next, ...more] = rest
  if (next === undefined) return undefined
  switch (type.t) {
    case 'message': {
      const field = Object.hasOwn(type.fields, next) ? type.fields[next] : undefined
      if (field === undefined) return `${at} (${type.name}) has no field "${next}"; its fields: ${Object.keys(type.fields).join(', ')}.`
      return unmappable(field, `${at}.${next}`, more)
    }
    case 'map':
      return more.length === 0 ? undefined : unmappable(type.of, `${at}.${next}`, more)
    case 'opaque':
      // Its JSON is walked as the update merges it (mergeMaskPath refuses a path through a value that is no object).
      return undefined
    default:
      return `${at} is ${what(type)}, not a message: a path ends there; name "${at}" whole.`
  }
}

/**
 * Checks every path of an update mask (read by proto-json: lowerCamelCase) against the resource's
 * schema and the update's rules; returns the paths split at their dots.
 */
export function checkUpdateMask(resource: MessageType, paths: readonly string[], rules: MaskRules): string[][] {
  return paths.map((path, i) => {
    const refuse = (message: string): Error => invalidArgument(`updateMask.paths[${i}]`, message)
    const segments = path.split('.')
    const [head = '', ...rest] = segments
    if (segments.some((s) => s === '')) throw refuse(`"${path}" is not a field path: field names joined by single dots, like "displayName".`)
    const immutable = rules.immutable !== undefined && Object.hasOwn(rules.immutable, head) ? rules.immutable[head] : undefined
    if (immutable !== undefined) throw refuse(immutable)
    const field = Object.hasOwn(resource.fields, head) ? resource.fields[head] : undefined
    if (field === undefined || !rules.updatable.includes(head)) {
      throw refuse(`"${path}" cannot be updated; updatable fields: ${rules.updatable.join(', ')}${rules.subPaths ? ' (and fields inside them)' : ''}.`)
    }
    if (rest.length > 0 && !rules.subPaths) throw refuse(`"${path}": ${head} is updated whole; name it alone ("${head}").`)
    const why = unmappable(field, head, rest)
    if (why !== undefined) throw refuse(why)
    return segments
  })
}

/**
 * A map key as the mask names it. A mask's paths are lowerCamelCase (proto3 JSON's FieldMask, and
 * proto-json reads every path so), which turns a label key `cost_center` into `costCenter`: where
 * the map holds no key as named but holds its snake_case form, on either side, that is the key.
 */
function mapKey(level: Level, key: string, into: Readonly<Record<string, unknown>>, from: Readonly<Record<string, unknown>> | undefined): string {
  if (level?.t !== 'map' || Object.hasOwn(into, key) || (from !== undefined && Object.hasOwn(from, key))) return key
  const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
  return snake !== key && (Object.hasOwn(into, snake) || (from !== undefined && Object.hasOwn(from, snake))) ? snake : key
}

/** What holds the values at one level of a merge: a message (its fields, its oneofs), a map (its values' type), or JSON Quarry does not interpret. */
type Level = MessageType | Extract<FieldType, { t: 'map' }> | undefined

function levelOf(level: Level, key: string): Level {
  const type = level === undefined ? undefined : level.t === 'message' ? (Object.hasOwn(level.fields, key) ? level.fields[key] : undefined) : level.of
  return type?.t === 'message' || type?.t === 'map' ? type : undefined
}

const objectOr = (value: unknown): Record<string, unknown> | undefined => (typeof value === 'object' && value !== null && isPlainObject(value) ? (value as Record<string, unknown>) : undefined)

function own(value: Record<string, unknown> | undefined, key: string): unknown {
  return value !== undefined && Object.hasOwn(value, key) ? value[key] : undefined
}

/**
 * `target` with the value at `path` (checked by {@link checkUpdateMask}) taken from `source`,
 * removed where `source` has none ("If a field is in the mask and not set in the request, the
 * field is cleared"), as protobuf's FieldMaskUtil merges: setting a member of a oneof clears the
 * others (`ttlConfig.granularTtlConfig` replaces a `defaultTtl`). `target` and `source` are the
 * resource as read (`type`); neither is changed. A path into JSON Quarry keeps as given goes
 * through objects only: INVALID_ARGUMENT at `field` otherwise.
 */
export function mergeMaskPath(target: Readonly<Record<string, unknown>>, source: Readonly<Record<string, unknown>> | undefined, path: readonly string[], type: MessageType, field: string): Record<string, unknown> {
  const merge = (into: Readonly<Record<string, unknown>>, from: Readonly<Record<string, unknown>> | undefined, at: number, level: Level): Record<string, unknown> => {
    const key = mapKey(level, path[at] as string, into, from)
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(into)) setOwn(out, k, v)
    const given = own(from, key)
    const stored = own(into, key)
    const set = (value: unknown): void => {
      setOwn(out, key, value)
      for (const group of level?.t === 'message' ? (level.oneofs ?? []) : []) if (group.includes(key)) for (const other of group) if (other !== key) delete out[other]
    }
    if (at === path.length - 1) {
      if (given === undefined) delete out[key]
      else set(given)
      return out
    }
    // Neither side has the message the path goes through: nothing to set, and no empty message made (as FieldMaskUtil).
    if (stored === undefined && given === undefined) return out
    if ((stored !== undefined && objectOr(stored) === undefined) || (given !== undefined && objectOr(given) === undefined)) {
      const through = path.slice(0, at + 1).join('.')
      throw invalidArgument(field, `"${path.join('.')}" goes inside ${through}, which is not an object; name "${through}" instead.`)
    }
    set(merge(objectOr(stored) ?? {}, objectOr(given), at + 1, levelOf(level, key)))
    return out
  }
  return merge(target, source, 0, type)
}
