import fc from 'fast-check'
import { message, string, type FieldType, type MessageType } from '../../../packages/adapters/src/rpc/proto-json.js'
import * as memoryBank from '../../../packages/adapters/src/memory-bank/schema.js'
import * as retriever from '../../../packages/adapters/src/semantic-retriever/schema.js'
import { SHARED_REQUESTS, V1BETA1_REQUESTS, requestSchema } from '../../../packages/adapters/src/vertex-rag/schema.js'
import { OPERATIONS_REQUESTS } from '../../../packages/adapters/src/rpc/mixins.js'
import { SESSION_REQUESTS } from '../../../packages/adapters/src/memory-bank/session-schema.js'
import * as engines from '../../../packages/adapters/src/memory-bank/engine-schema.js'
import { GenerateContentRequest } from '../../../packages/adapters/src/generative/schema.js'
import { Known, Obj, longString, nested, type J } from './json.js'
import { benignFilter, filterArb, floatValue, hostileName, intValue, mapKey, polluted, sentence, textValue } from './values.js'

/**
 * Request messages generated from the request schemas the server reads them with (proto-json.ts):
 * each field by its type and, for strings, by its name (names, ids, URIs, filters, tokens, keys,
 * text). Benign messages are what a correct client sends; hostile ones mix hostile values in.
 */

export const GetOperationRequest = message('google.longrunning.GetOperationRequest', { name: string })

function isRequest(name: string, value: unknown): value is MessageType {
  return name.endsWith('Request') && typeof value === 'object' && value !== null && (value as FieldType).t === 'message'
}

const SCHEMAS = new Map<string, MessageType>()
for (const [name, value] of [...Object.entries(retriever), ...Object.entries(memoryBank)]) if (isRequest(name, value)) SCHEMAS.set(value.name, value)
// Memory Bank under v1 reads the v1beta1 requests.
for (const [name, value] of Object.entries(memoryBank)) if (isRequest(name, value)) SCHEMAS.set(value.name.replace('.v1beta1.', '.v1.'), value)
for (const schema of [...Object.values(SHARED_REQUESTS), ...Object.values(V1BETA1_REQUESTS)]) {
  for (const version of ['v1', 'v1beta1'] as const) {
    const s = requestSchema(schema as MessageType, version)
    SCHEMAS.set(s.name, s)
  }
}
// Agent Engine Sessions: one schema reads v1beta1 and v1.
for (const schema of Object.values(SESSION_REQUESTS)) {
  SCHEMAS.set(schema.name, schema)
  SCHEMAS.set(schema.name.replace('.v1beta1.', '.v1.'), schema)
}
// Agent Engine resources: one schema reads v1beta1 and v1. The execution service's queries are
// answered UNIMPLEMENTED whatever they carry: their requests are read by name alone.
for (const [name, value] of Object.entries(engines)) {
  if (!isRequest(name, value)) continue
  SCHEMAS.set(value.name, value)
  SCHEMAS.set(value.name.replace('.v1beta1.', '.v1.'), value)
}
for (const version of ['v1', 'v1beta1']) {
  for (const method of ['Query', 'StreamQuery', 'AsyncQuery', 'CancelAsyncQuery']) {
    const name = `google.cloud.aiplatform.${version}.${method}ReasoningEngineRequest`
    SCHEMAS.set(name, message(name, { name: string }))
  }
  // The PredictionService and Memory Bank methods Quarry does not serve answer UNIMPLEMENTED whatever they carry: read by name alone.
  for (const method of ['Predict', 'RawPredict', 'DirectPredict', 'DirectRawPredict', 'Explain', 'CountTokens', 'EmbedContent', 'StreamRawPredict', 'ServerStreamingPredict', 'IngestEvents', 'RetrieveProfiles']) {
    const name = `google.cloud.aiplatform.${version}.${method === 'ServerStreamingPredict' ? 'StreamingPredict' : method}Request`
    SCHEMAS.set(`google.cloud.aiplatform.${version}.${method}Request`, message(name, {}))
  }
  // StreamGenerateContent reads GenerateContentRequest.
  const generate = requestSchema(GenerateContentRequest, version as 'v1' | 'v1beta1')
  SCHEMAS.set(generate.name, generate)
  SCHEMAS.set(`google.cloud.aiplatform.${version}.StreamGenerateContentRequest`, generate)
}
SCHEMAS.set(GetOperationRequest.name, GetOperationRequest)
for (const schema of Object.values(OPERATIONS_REQUESTS)) SCHEMAS.set(schema.name, schema)
for (const name of ['google.cloud.location.GetLocationRequest', 'google.cloud.location.ListLocationsRequest', 'google.iam.v1.GetIamPolicyRequest', 'google.iam.v1.SetIamPolicyRequest', 'google.iam.v1.TestIamPermissionsRequest']) SCHEMAS.set(name, message(name, {}))

/** `google.cloud.aiplatform.v1.VertexRagDataService.ImportRagFiles` → the schema of `google.cloud.aiplatform.v1.ImportRagFilesRequest`. */
export function requestSchemaOf(rpc: string): MessageType | undefined {
  const clean = rpc.replace(/ \(.*\)$/, '')
  const method = clean.slice(clean.lastIndexOf('.') + 1)
  const service = clean.slice(0, clean.lastIndexOf('.'))
  return SCHEMAS.get(`${service.slice(0, service.lastIndexOf('.'))}.${method}Request`)
}

export interface Fixtures {
  /** URIs of ordinary files and folders inside the roots. */
  readonly goodUris: readonly string[]
  /** URIs of the secret, special files, links out of the roots, traversal. */
  readonly hostileUris: readonly string[]
}


/**
 * A field's name says what its strings mean. `benign`: what a correct client sends (names that
 * exist, good URIs, plain words); otherwise hostile values are mixed in.
 */
function stringArb(field: string, depth: number, hint: string | undefined, fixtures: Fixtures, benign: boolean): fc.Arbitrary<J> {
  const known = (h: string | undefined, part: 'name' | 'id'): fc.Arbitrary<J> => fc.nat().map((i) => new Known(h, i, part))
  const mix = (good: fc.Arbitrary<J>, bad: fc.Arbitrary<J>, badWeight = 2): fc.Arbitrary<J> => (benign ? good : fc.oneof({ weight: 4, arbitrary: good }, { weight: badWeight, arbitrary: bad }))
  switch (field) {
    case 'name':
    case 'parent':
    case 'names':
      return mix(depth > 1 || field === 'names' ? known(field === 'parent' ? undefined : hint, 'name') : known(undefined, 'name'), hostileName)
    case 'ragCorpus':
    case 'ragCorpora':
      return mix(known('ragCorpora', 'name'), hostileName)
    case 'ragFileIds':
      return mix(known('ragFiles', 'id'), fc.constantFrom<J>('..', '__proto__', '1', '', longString('9', 5_000)))
    case 'memoryId':
    case 'ragDataSchemaId':
    case 'ragMetadataId':
      return mix(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.oneof(fc.constantFrom<J>('..', '__proto__', 'constructor', 'a/b', '', 'UPPER', longString('a', 64), longString('a', 40_000)), known(undefined, 'id')))
    case 'uris':
      return mix(fc.constantFrom(...fixtures.goodUris), fc.constantFrom(...fixtures.hostileUris), 6)
    case 'metadataFilter':
    case 'filter':
      return mix(benignFilter, filterArb(), 4)
    case 'pageToken':
      return mix(fc.nat().map((i) => new Known(undefined, i, 'token')), fc.constantFrom<J>('', 'x', 'eyJ4IjoxfQ', '__proto__', '%', longString('A', 20_000)))
    case 'key':
      return mix(fc.constantFrom('year', 'tag', 'score', 'flag', 'when', 'tags', 'topic', 'chunk.custom_metadata.tag', 'document.custom_metadata.year'), fc.oneof(mapKey, fc.constantFrom<J>(longString('k', 300))))
    case 'datetimeValue':
      return mix(fc.constantFrom('2025-01-01T00:00:00Z', '2026-06-01T12:30:00Z'), fc.constantFrom<J>('2025-13-45T99:99:99Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', 'yesterday', ''))
    case 'endpoint':
    case 'model':
    case 'modelName':
    case 'modelVersionId':
      return mix(fc.constant(''), fc.constantFrom<J>('projects/p/locations/l/endpoints/e', 'http://169.254.169.254/', 'file:///etc/passwd'))
    default:
      return mix(sentence, textValue, 3)
  }
}

/** Fields a correct client seldom sets. */
const RARE = /^(ragFileIds|ragCorpora|similarityTopK|ranking|vectorDistanceThreshold|vectorSimilarityThreshold)$/

/** Fields a correct client leaves out (the server sets them), or sets to name other things. */
const OUTPUT_ONLY = new Set(['createTime', 'updateTime', 'state', 'corpusStatus', 'fileStatus', 'ragFilesCount', 'sizeBytes', 'satisfiesPzs', 'satisfiesPzi', 'expireTime', 'ragFileType'])

function fieldArb(type: FieldType, field: string, depth: number, hint: string | undefined, fixtures: Fixtures, benign: boolean): fc.Arbitrary<J> {
  const mix = (good: fc.Arbitrary<J>, bad: fc.Arbitrary<J>): fc.Arbitrary<J> => (benign ? good : fc.oneof({ weight: 4, arbitrary: good }, { weight: 2, arbitrary: bad }))
  switch (type.t) {
    case 'string':
      return stringArb(field, depth, hint, fixtures, benign)
    case 'bool':
      return mix(fc.boolean(), fc.constantFrom<J>('true', 'false', 1, 0, 'yes', null))
    case 'bytes':
      return mix(fc.constantFrom<J>('c2lnbmF0dXJl', 'AAAA', 'c2ln_-8'), fc.constantFrom<J>('not base64!', 'A', '====', 5, true, longString('A', 5_000)))
    case 'int32':
    case 'int64':
      return mix(fc.integer({ min: 1, max: 20 }), intValue)
    case 'float':
    case 'double':
      return mix(fc.integer({ min: 0, max: 20 }).map((i) => i / 20), floatValue)
    case 'timestamp':
      return mix(
        fc.constantFrom<J>('2027-01-01T00:00:00Z', '2026-06-01T12:30:00.5Z'),
        fc.constantFrom<J>('0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z', '10000-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-01T00:00:00+25:00', 'yesterday', '', 1_700_000_000, new Obj([['seconds', '1'], ['nanos', 5]])),
      )
    case 'duration':
      return mix(fc.constantFrom<J>('3600s', '86400s'), fc.constantFrom<J>('0s', '1.5s', '-1s', '315576000001s', '99999999999999999999s', '1e9s', 'abc', 5, new Obj([['seconds', longString('9', 30)]]), new Obj([['seconds', 60], ['nanos', 0]])))
    case 'fieldMask':
      return mix(
        fc.constantFrom<J>('displayName', 'fact', 'fact,scope', 'ttl', 'data', 'customMetadata', 'description', 'userSpecifiedMetadata', 'display_name'),
        fc.constantFrom<J>('expireTime', 'chunk.data', 'ragMetadata.userSpecifiedMetadata', '__proto__', 'constructor.prototype', '', '*', 'a,,b', longString('a', 5_000)),
      )
    case 'enum': {
      const names = Object.keys(type.values).filter((n) => type.values[n] !== 0)
      return mix(fc.constantFrom<J>(...(names.length > 0 ? names : Object.keys(type.values))), fc.constantFrom<J>(...Object.values(type.values), -1, 999, 'NOPE', '', 1.5, true, (names[0] ?? 'x').toLowerCase()))
    }
    case 'repeated':
      return benign
        ? fc.oneof({ weight: 3, arbitrary: fieldArb(type.of, field, depth + 1, hint, fixtures, benign).map((v) => [v]) }, { weight: 1, arbitrary: fc.array(fieldArb(type.of, field, depth + 1, hint, fixtures, benign), { minLength: 1, maxLength: 3 }) })
        : fc.oneof({ weight: 9, arbitrary: fc.array(fieldArb(type.of, field, depth + 1, hint, fixtures, benign), { maxLength: 3 }) }, { weight: 1, arbitrary: fc.constantFrom<J>([], [null], new Obj([])) })
    case 'map':
      return benign
        ? fc.uniqueArray(fc.tuple(fc.constantFrom('year', 'tag', 'user_id', 'agent'), fieldArb(type.of, field, depth + 1, hint, fixtures, benign)), { minLength: 1, maxLength: 2, selector: ([k]) => k }).map((entries) => new Obj(entries))
        : fc.array(fc.tuple(mapKey, fieldArb(type.of, field, depth + 1, hint, fixtures, benign)), { maxLength: 3 }).map((entries) => new Obj(entries))
    case 'opaque':
      return fc.constantFrom<J>(new Obj([]), new Obj([['x', 1]]), new Obj([['strValue', 'a']]), new Obj([['__proto__', polluted]]), nested('object', 80), nested('list', 101))
    case 'message':
      return messageArb(type, depth, hint, fixtures, benign)
  }
}

export const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * A message with some of its fields (each present with probability 3/4 at the top, 1/2 below) and
 * at most one member of each oneof. A benign message leaves out what a correct client would:
 * output-only fields, other backends' configs (opaque), mostly names below the top.
 */
export function messageArb(type: MessageType, depth: number, hint: string | undefined, fixtures: Fixtures, benign: boolean, skip: readonly string[] = []): fc.Arbitrary<Obj> {
  if (depth > 8) return fc.constant(new Obj([]))
  const fields = Object.entries(type.fields).filter(([k, t]) => !skip.includes(k) && !(benign && (OUTPUT_ONLY.has(k) || t.t === 'opaque')))
  if (fields.length === 0) return fc.constant(new Obj([]))
  // Weights of [absent, present].
  // A correct client seldom sends names below the top and file ids (they would mostly name things
  // of other parents), thresholds (a deprecated one conflicts with the new ones) or deprecated fields.
  const rare = (k: string): boolean => (depth > 0 && k === 'parent') || RARE.test(k)
  const odds = (k: string): [number, number] => (benign ? (rare(k) ? [4, 1] : depth > 0 && k === 'name' ? [1, 1] : [1, 3]) : depth === 0 ? [1, 3] : [1, 1])
  // A benign update mask names fields of the message it updates (the request's other message field).
  const maskable = fields.flatMap(([, t]) => (t.t === 'message' ? Object.entries(t.fields).filter(([n, f]) => !OUTPUT_ONLY.has(n) && f.t !== 'opaque' && n !== 'name').map(([n]) => n) : []))
  const arbOf = (k: string, t: FieldType): fc.Arbitrary<J> =>
    benign && t.t === 'fieldMask' && maskable.length > 0 ? fc.subarray(maskable, { minLength: 1, maxLength: Math.min(2, maskable.length) }).map((m) => m.join(',')) : fieldArb(t, k, depth + 1, hint, fixtures, benign)
  const maybe = (k: string, arb: fc.Arbitrary<J>): fc.Arbitrary<J | undefined> => {
    const [absent, present] = odds(k)
    return fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: present, arbitrary: arb })
  }
  return fc
    .tuple(fc.tuple(...fields.map(([k, t]) => maybe(k, arbOf(k, t)))), fc.integer({ min: 0, max: 9 }))
    .map(([values, style]) => {
      const entries: Array<[string, J]> = []
      const taken = new Set<string>()
      fields.forEach(([k], i) => {
        const v = values[i]
        if (v === undefined) return
        const group = (type.oneofs ?? []).find((o) => o.includes(k))
        if (group && group.some((g) => taken.has(g))) return
        taken.add(k)
        entries.push([style === 0 ? snake(k) : k, v])
      })
      return new Obj(entries)
    })
}
