import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import * as retriever from '../../packages/adapters/src/semantic-retriever/schema.js'
import { SHARED_REQUESTS, V1BETA1_REQUESTS, requestSchema } from '../../packages/adapters/src/vertex-rag/schema.js'
import { CLIENT_REQUESTS, NEWER_FIELDS } from '../../packages/adapters/src/memory-bank/schema.js'
import { SESSION_REQUESTS } from '../../packages/adapters/src/memory-bank/session-schema.js'
import * as engines from '../../packages/adapters/src/memory-bank/engine-schema.js'
import { GenerateContentRequest } from '../../packages/adapters/src/generative/schema.js'
import { NEWER_PART_FIELDS } from '../../packages/adapters/src/rpc/content.js'
import { hasPresence, without } from '../../packages/adapters/src/rpc/proto-json.js'
import type { FieldType, MessageType } from '../../packages/adapters/src/rpc/proto-json.js'

/**
 * The request schemas were written from Google's v1beta protos; this checks them against the
 * protos that ship inside Google's own Node client, so a renamed field, a missing one or a
 * renumbered enum value cannot slip in.
 */
const require = createRequire(import.meta.url)

interface ProtoNode {
  fields?: Record<string, { type: string; rule?: string; keyType?: string; options?: Record<string, unknown> }>
  values?: Record<string, number>
  oneofs?: Record<string, { oneof: string[] }>
  nested?: Record<string, ProtoNode>
}

function lookup(root: ProtoNode, fullName: string): ProtoNode {
  let node: ProtoNode | undefined = root
  for (const part of fullName.split('.')) node = node?.nested?.[part]
  if (!node) throw new Error(`${fullName} is not in the protos`)
  return node
}

const SCALARS: Record<string, string[]> = {
  string: ['string'],
  bool: ['bool'],
  int32: ['int32'],
  int64: ['int64'],
  float: ['float'],
  double: ['double'],
  bytes: ['bytes'],
  timestamp: ['google.protobuf.Timestamp'],
  duration: ['google.protobuf.Duration'],
  fieldMask: ['google.protobuf.FieldMask'],
}

function checkMessage(root: ProtoNode, schema: MessageType): void {
  const proto = lookup(root, schema.name)
  expect(Object.keys(schema.fields).sort(), schema.name).toEqual(Object.keys(proto.fields ?? {}).sort())
  for (const [name, type] of Object.entries(schema.fields)) {
    const field = proto.fields?.[name] as { type: string; rule?: string }
    checkField(root, schema.name, name, type, field)
  }
  // Oneofs of two or more members (one-member oneofs constrain nothing).
  const groups = (list: readonly (readonly string[])[]): string[][] => list.filter((o) => o.length > 1).map((o) => [...o].sort())
  expect(groups(schema.oneofs ?? []), `${schema.name} oneofs`).toEqual(groups(Object.values(proto.oneofs ?? {}).map((o) => o.oneof)))
  // Presence of every singular scalar: `optional` (a synthetic one-member oneof in protos.json) or a
  // oneof member in the protos ⇔ presence in the schema, so the reader drops exactly the zeros
  // that mean "unset".
  const inProtoOneof = new Set(Object.values(proto.oneofs ?? {}).flatMap((o) => o.oneof))
  for (const [name, type] of Object.entries(schema.fields)) {
    if (!['string', 'bytes', 'bool', 'int32', 'int64', 'float', 'double', 'enum'].includes(type.t)) continue
    const protoPresence = proto.fields?.[name]?.options?.proto3_optional === true || inProtoOneof.has(name)
    expect(hasPresence(schema, name), `${schema.name}.${name} presence`).toBe(protoPresence)
  }
}

function checkField(root: ProtoNode, owner: string, name: string, type: FieldType, field: { type: string; rule?: string; keyType?: string }): void {
  const label = `${owner}.${name}`
  if (type.t === 'repeated') {
    expect(field.rule, label).toBe('repeated')
    return checkField(root, owner, name, type.of, { type: field.type })
  }
  if (type.t === 'map') {
    expect(field.keyType, label).toBe('string')
    return checkField(root, owner, name, type.of, { type: field.type })
  }
  expect(field.rule, label).toBeUndefined()
  if (type.t === 'opaque') {
    expect(type.name.endsWith(field.type), label).toBe(true)
    lookup(root, type.name)
    return
  }
  if (type.t === 'message') {
    expect(type.name.endsWith(field.type), label).toBe(true)
    return checkMessage(root, type)
  }
  if (type.t === 'enum') {
    expect(type.name.endsWith(field.type), label).toBe(true)
    expect(type.values, label).toEqual(lookup(root, type.name).values)
    return
  }
  expect(SCALARS[type.t], label).toContain(field.type)
}

describe('request schemas match the protos of Google\'s Node clients', () => {
  it('Semantic Retriever (v1beta, @google-ai/generativelanguage)', () => {
    const root = require('@google-ai/generativelanguage/build/protos/protos.json') as ProtoNode
    const requests = Object.entries(retriever).filter(([name, v]) => name.endsWith('Request') && (v as FieldType).t === 'message')
    expect(requests.length).toBe(20)
    for (const [, schema] of requests) checkMessage(root, schema as MessageType)
  })

  it('Vertex AI RAG Engine v1 and v1beta1 (@google-cloud/aiplatform)', () => {
    const root = require('@google-cloud/aiplatform/build/protos/protos.json') as ProtoNode
    for (const schema of Object.values(SHARED_REQUESTS)) {
      checkMessage(root, without(requestSchema(schema, 'v1beta1'), NEWER_PART_FIELDS))
      checkMessage(root, requestSchema(schema, 'v1'))
    }
    for (const schema of Object.values(V1BETA1_REQUESTS)) checkMessage(root, schema)
  })

  it('Agent Engine Sessions v1beta1 and v1 (@google-cloud/aiplatform): one schema reads both', () => {
    const root = require('@google-cloud/aiplatform/build/protos/protos.json') as ProtoNode
    expect(Object.keys(SESSION_REQUESTS).length).toBe(7)
    for (const schema of Object.values(SESSION_REQUESTS)) {
      checkMessage(root, schema)
      checkMessage(root, without(schema, {}, (name) => name.replace('.v1beta1.', '.v1.')))
    }
  })

  it('Memory Bank v1beta1 (@google-cloud/aiplatform), less the fields the API gained since', () => {
    const root = require('@google-cloud/aiplatform/build/protos/protos.json') as ProtoNode
    for (const schema of Object.values(CLIENT_REQUESTS)) checkMessage(root, without(schema, NEWER_FIELDS))
  })

  it('ReasoningEngineService v1beta1 and v1 (@google-cloud/aiplatform), less the fields the API gained since', () => {
    const root = require('@google-cloud/aiplatform/build/protos/protos.json') as ProtoNode
    const requests = Object.entries(engines).filter(([name, v]) => name.endsWith('Request') && (v as FieldType).t === 'message') as [string, MessageType][]
    expect(requests.map(([name]) => name).sort()).toEqual(['CreateReasoningEngineRequest', 'DeleteReasoningEngineRequest', 'GetReasoningEngineRequest', 'ListReasoningEnginesRequest', 'UpdateReasoningEngineRequest'])
    // v1's ReasoningEngine has neither contextSpec nor trafficConfig in the pinned client: REST carries them, gRPC v1 drops them.
    const v1Only = { 'google.cloud.aiplatform.v1beta1.ReasoningEngine': ['contextSpec', 'trafficConfig'] }
    for (const [, schema] of requests) {
      checkMessage(root, without(schema, engines.NEWER_ENGINE_FIELDS))
      checkMessage(root, without(schema, v1Only, (name) => name.replace('.v1beta1.', '.v1.')))
    }
  })
})

describe("generateContent's request matches the protos", () => {
  it('v1beta1 and v1 (@google-cloud/aiplatform)', () => {
    const root = require('@google-cloud/aiplatform/build/protos/protos.json') as ProtoNode
    // Part.mediaResolution is in v1's pinned protos, not yet in v1beta1's.
    checkMessage(root, without(requestSchema(GenerateContentRequest, 'v1beta1'), NEWER_PART_FIELDS))
    checkMessage(root, requestSchema(GenerateContentRequest, 'v1'))
  })
})
