import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { buildRoutes } from '../../packages/adapters/src/http/routes.js'
import { camelCase } from '../../packages/adapters/src/rpc/proto-json.js'

/** The server's route table equals the google.api.http bindings in the protos of Google's clients. */
const require = createRequire(import.meta.url)
interface Method { options?: Record<string, string> }
interface Node { nested?: Record<string, Node>; methods?: Record<string, Method> }

function service(root: Node, path: string): Record<string, Method> {
  let node: Node | undefined = root
  for (const part of path.split('.')) node = node?.nested?.[part]
  if (!node?.methods) throw new Error(`${path} not found`)
  return node.methods
}

/** `/v1beta1/{rag_corpus.name=projects/*}` → `/v1beta1/{ragCorpus.name=projects/*}`. */
const camelTemplate = (t: string): string => t.replace(/\{([^=}]+)/g, (_, f: string) => `{${f.split('.').map(camelCase).join('.')}`)

const routes = buildRoutes({ semanticRetriever: new SemanticRetriever(), vertexRag: new VertexRagEngine(), memoryBank: new MemoryBank() })

function expectBindings(root: Node, servicePath: string, skip: readonly string[] = []): number {
  let checked = 0
  for (const [name, method] of Object.entries(service(root, servicePath))) {
    if (skip.includes(name)) continue
    const o = method.options ?? {}
    const verb = (['post', 'get', 'patch', 'delete'] as const).find((v) => o[`(google.api.http).${v}`] !== undefined)
    if (!verb) throw new Error(`${name} has no http binding`)
    const template = camelTemplate(o[`(google.api.http).${verb}`] as string)
    const body = o['(google.api.http).body']
    const route = routes.find((r) => r.rpc === `${servicePath}.${name}`)
    expect(route, `${servicePath}.${name}`).toBeDefined()
    expect({ method: route?.method, template: route?.template, body: route?.body }).toEqual({ method: verb.toUpperCase(), template, body: body === undefined ? undefined : body === '*' ? '*' : camelCase(body) })
    checked++
  }
  return checked
}

describe('REST routes match the google.api.http bindings', () => {
  it('Semantic Retriever (generativelanguage v1beta)', () => {
    const root = require('@google-ai/generativelanguage/build/protos/protos.json') as Node
    expect(expectBindings(root, 'google.ai.generativelanguage.v1beta.RetrieverService')).toBe(20)
  })
  it('Vertex AI RAG Engine and Memory Bank (aiplatform v1, v1beta1)', () => {
    const root = require('@google-cloud/aiplatform/build/protos/protos.json') as Node
    // Served: retrieveContexts of VertexRagService; RagEngineConfig (project settings) is not.
    const ragOnly = ['AugmentPrompt', 'CorroborateContent', 'AskContexts', 'AsyncRetrieveContexts']
    const config = ['UpdateRagEngineConfig', 'GetRagEngineConfig']
    expect(expectBindings(root, 'google.cloud.aiplatform.v1.VertexRagService', ragOnly)).toBe(1)
    expect(expectBindings(root, 'google.cloud.aiplatform.v1beta1.VertexRagService', ragOnly)).toBe(1)
    expect(expectBindings(root, 'google.cloud.aiplatform.v1.VertexRagDataService', config)).toBe(10)
    expect(expectBindings(root, 'google.cloud.aiplatform.v1beta1.VertexRagDataService', config)).toBe(23)
    expect(expectBindings(root, 'google.cloud.aiplatform.v1beta1.MemoryBankService')).toBe(7)
  })
})
