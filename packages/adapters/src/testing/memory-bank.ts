import fc from 'fast-check'
import { ENGINE, SHORT_ENGINE } from '../memory-bank/context.js'
import type { ConjunctionInput, RetrieveMemoriesRequest } from '../memory-bank/schema.js'
import { omitUndefined } from '../rpc/omit.js'
import { CAPS, characterCount } from '../rpc/limits.js'
import type { Infer } from '../rpc/proto-json.js'
import { aip160FilterArbitrary, writableField, type FilterKey } from './aip160-filters.js'
import { checkKinds, checkName, invalidOption } from './check.js'
import { queriesOf } from './query-text.js'
import { doubleValue, stringValue, timestampValue } from './values.js'

/** A RetrieveMemoriesRequest (v1beta1 MemoryBankService) as proto3 JSON (every field optional, as in the protos). */
export type RetrieveMemoriesRequestInput = Infer<typeof RetrieveMemoriesRequest>

/** The value a memory's metadata entry sets (MemoryMetadataValue), which `filterGroups` compare. */
export type MemoryMetadataKind = 'stringValue' | 'doubleValue' | 'boolValue' | 'timestampValue'

const KINDS: readonly MemoryMetadataKind[] = ['stringValue', 'doubleValue', 'boolValue', 'timestampValue']

/** Options of {@link retrieveMemoriesRequestArbitrary}. */
export interface RetrieveMemoriesRequestOptions {
  /** The reasoning engine: `projects/{project}/locations/{location}/reasoningEngines/{id}` or `reasoningEngines/{id}`. */
  readonly reasoningEngine: string
  /**
   * Scopes requests name (one each). @defaultValue generated scopes: `user_id` and sometimes
   * `agent_id` / `session_id`, short [a-z0-9_-] values
   */
  readonly scopes?: readonly Readonly<Record<string, string>>[]
  /** Memory metadata keys `filterGroups` may compare, with their kinds. @defaultValue {} (no filterGroups) */
  readonly metadataSchema?: Readonly<Record<string, MemoryMetadataKind>>
  /** Search queries. Texts that are blank or over 10,000 characters are skipped. @defaultValue queryTextArbitrary() */
  readonly query?: fc.Arbitrary<string>
}

const SCOPE_MAX = 32
const TOPICS = ['USER_PERSONAL_INFO', 'USER_PREFERENCES', 'KEY_CONVERSATION_DETAILS', 'EXPLICIT_INSTRUCTIONS', 'travel', 'music']

function checkScopes(scopes: readonly Readonly<Record<string, string>>[], path: string): void {
  if (!Array.isArray(scopes) || scopes.length === 0) throw invalidOption(path, 'must be a non-empty list of scopes like { user_id: "123" }.')
  scopes.forEach((scope, i) => {
    const entries = Object.entries(scope)
    if (entries.length === 0 || entries.length > SCOPE_MAX) throw invalidOption(`${path}[${i}]`, `must have 1 to ${SCOPE_MAX} key/value pairs.`)
    for (const [k, v] of entries) {
      if (k === '' || characterCount(k) > CAPS.key.max) throw invalidOption(`${path}[${i}]`, `keys must have 1 to ${CAPS.key.max} characters.`)
      if (typeof v !== 'string' || v.includes('*') || characterCount(v) > CAPS.value.max) throw invalidOption(`${path}[${i}].${k}`, `must be a string of at most ${CAPS.value.max} characters without "*".`)
    }
  })
}

const scopeValue = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789_-'), minLength: 1, maxLength: 12 })
const DEFAULT_SCOPE = fc.record({ user_id: scopeValue, agent_id: scopeValue, session_id: scopeValue }, { requiredKeys: ['user_id'] })

type MemoryFilter = NonNullable<ConjunctionInput['filters']>[number]

function valueOf(kind: MemoryMetadataKind): fc.Arbitrary<NonNullable<MemoryFilter['value']>> {
  switch (kind) {
    case 'stringValue':
      return stringValue.map((v) => ({ stringValue: v }))
    case 'doubleValue':
      return doubleValue.map((v) => ({ doubleValue: v }))
    case 'boolValue':
      return fc.boolean().map((v) => ({ boolValue: v }))
    case 'timestampValue':
      return timestampValue.map((v) => ({ timestampValue: v }))
  }
}

/**
 * Valid `memories.retrieve` requests (RetrieveMemoriesRequest) for one reasoning engine: one of
 * the scopes; similarity search (a query, topK ≥ 0) or simple retrieval (pageSize ≥ 0; no page
 * token, which only the service issues) or neither; an AIP-160 `filter` over fact, create_time,
 * update_time, topics and scope.<key>; and `filterGroups` (ORed groups of ANDed EQUAL /
 * GREATER_THAN / LESS_THAN comparisons, each maybe negated) over the declared metadata keys.
 * Each request is valid per the adapters' schema and limits: Quarry's MemoryBank answers every
 * one without INVALID_ARGUMENT.
 */
export function retrieveMemoriesRequestArbitrary(options: RetrieveMemoriesRequestOptions): fc.Arbitrary<RetrieveMemoriesRequestInput> {
  const parent = checkName(options.reasoningEngine, typeof options.reasoningEngine === 'string' && options.reasoningEngine.startsWith('reasoningEngines/') ? SHORT_ENGINE : ENGINE, 'reasoningEngine')
  const given = options.scopes
  if (given !== undefined) checkScopes(given, 'scopes')
  const scope: fc.Arbitrary<Record<string, string>> = given === undefined ? DEFAULT_SCOPE : fc.constantFrom(...given).map((s) => ({ ...s }))
  const scopeKeys = given === undefined ? ['user_id', 'agent_id', 'session_id'] : [...new Set(given.flatMap((s) => Object.keys(s)))]
  const filterKeys: FilterKey[] = [
    { field: 'fact', type: 'string' },
    { field: 'create_time', type: 'datetime' },
    { field: 'update_time', type: 'datetime' },
    { field: 'topics', type: 'list', strings: TOPICS },
    ...scopeKeys.map((k) => `scope.${k}`).filter(writableField).map((field): FilterKey => ({ field, type: 'string' })),
  ]
  const metadata = checkKinds(options.metadataSchema, KINDS, CAPS.key.max, 'metadataSchema')
  const comparison = (key: string, kind: MemoryMetadataKind): fc.Arbitrary<MemoryFilter> =>
    fc.record({ key: fc.constant(key), op: fc.constantFrom('EQUAL' as const, 'GREATER_THAN' as const, 'LESS_THAN' as const), value: valueOf(kind), negate: fc.boolean() }, { requiredKeys: ['key', 'op', 'value'] })
  const filterGroups =
    metadata.length === 0
      ? fc.constant(undefined)
      : fc.option(fc.array(fc.record({ filters: fc.array(fc.oneof(...metadata.map(([k, kind]) => comparison(k, kind))), { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 3 }), { nil: undefined })
  const params = fc.oneof(
    fc.record({ similaritySearchParams: fc.record({ searchQuery: queriesOf(options.query), topK: fc.integer({ min: 0, max: 200 }) }, { requiredKeys: ['searchQuery'] }) }),
    fc.record({ simpleRetrievalParams: fc.record({ pageSize: fc.integer({ min: 0, max: 200 }) }, { requiredKeys: [] }) }),
    fc.constant(null).map(() => ({})),
  )
  return fc
    .record({ scope, params, filter: fc.option(aip160FilterArbitrary(filterKeys), { nil: undefined }), filterGroups })
    .map(({ scope, params, filter, filterGroups }): RetrieveMemoriesRequestInput => ({ parent, scope, ...params, ...omitUndefined({ filter, filterGroups }) }))
}
