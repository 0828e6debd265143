import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, httpStatusOf } from '@quarry/adapters'
import { restRoutes } from '../../packages/adapters/src/http/routes.js'
import { bindMethods } from '../../packages/adapters/src/transport/bound-methods.js'
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

const embedder = createHashingEmbedder({ dimensions: 8 })
const routes = restRoutes(bindMethods({ semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }))

/** Every RPC of the service has its route; returns the RPCs whose route answers UNIMPLEMENTED (HTTP 501) to an empty request. */
async function expectBindings(root: Node, servicePath: string): Promise<string[]> {
  const unimplemented: string[] = []
  for (const [name, method] of Object.entries(service(root, servicePath))) {
    const o = method.options ?? {}
    const verb = (['post', 'get', 'patch', 'delete'] as const).find((v) => o[`(google.api.http).${v}`] !== undefined)
    if (!verb) throw new Error(`${name} has no http binding`)
    const template = camelTemplate(o[`(google.api.http).${verb}`] as string)
    const body = o['(google.api.http).body']
    const route = routes.find((r) => r.rpc === `${servicePath}.${name}`)
    expect(route, `${servicePath}.${name}`).toBeDefined()
    expect({ method: route?.method, template: route?.template, body: route?.body }).toEqual({ method: verb.toUpperCase(), template, body: body === undefined ? undefined : body === '*' ? '*' : camelCase(body) })
    const outcome = await route?.call({}, undefined, { aborted: false })
    if (outcome && !outcome.ok && httpStatusOf(outcome.status.code) === 501) {
      expect(outcome.status.message, name).toContain(`.${name} is not implemented by Quarry: `)
      unimplemented.push(name)
    }
  }
  return unimplemented
}

describe('REST routes match the google.api.http bindings, for every RPC (the unserved ones answer 501)', () => {
  it('Semantic Retriever (generativelanguage v1beta)', async () => {
    const root = require('@google-ai/generativelanguage/build/protos/protos.json') as Node
    expect(Object.keys(service(root, 'google.ai.generativelanguage.v1beta.RetrieverService'))).toHaveLength(20)
    expect(await expectBindings(root, 'google.ai.generativelanguage.v1beta.RetrieverService')).toEqual([])
  })
  it('Vertex AI RAG Engine and Memory Bank (aiplatform v1, v1beta1)', async () => {
    const root = require('@google-cloud/aiplatform/build/protos/protos.json') as Node
    // Every RAG Engine RPC is served (askContexts and corroborateContent through the generativeModel
    // hook: an empty request is refused for its parent before the missing hook is noticed).
    expect(await expectBindings(root, 'google.cloud.aiplatform.v1.VertexRagService')).toEqual([])
    expect(await expectBindings(root, 'google.cloud.aiplatform.v1beta1.VertexRagService')).toEqual([])
    expect(await expectBindings(root, 'google.cloud.aiplatform.v1.VertexRagDataService')).toEqual([])
    expect(await expectBindings(root, 'google.cloud.aiplatform.v1beta1.VertexRagDataService')).toEqual([])
    expect(await expectBindings(root, 'google.cloud.aiplatform.v1beta1.MemoryBankService')).toEqual([])
    expect(Object.keys(service(root, 'google.cloud.aiplatform.v1.VertexRagService'))).toHaveLength(5)
    expect(Object.keys(service(root, 'google.cloud.aiplatform.v1.VertexRagDataService'))).toHaveLength(12)
    expect(Object.keys(service(root, 'google.cloud.aiplatform.v1beta1.VertexRagDataService'))).toHaveLength(25)
    expect(Object.keys(service(root, 'google.cloud.aiplatform.v1beta1.MemoryBankService'))).toHaveLength(7)
  })
  it("the Vertex mixins (operations served; locations and IAM 501), once per version", async () => {
    for (const version of ['v1', 'v1beta1']) {
      const mixins = routes.filter((r) => r.template.startsWith(`/${version}/`) && /^google\.(longrunning|cloud\.location|iam)\./.test(r.rpc))
      expect(mixins.map((r) => `${r.method} ${r.template} ${r.rpc.split('.').pop() ?? ''}`)).toEqual([
        `GET /${version}/{name=**/operations/*} GetOperation`,
        `GET /${version}/{name=**}/operations ListOperations`,
        `POST /${version}/{name=**/operations/*}:cancel CancelOperation`,
        `DELETE /${version}/{name=**/operations/*} DeleteOperation`,
        `POST /${version}/{name=**/operations/*}:wait WaitOperation`,
        `GET /${version}/{name=projects/*/locations/*} GetLocation`,
        `GET /${version}/{name=projects/*}/locations ListLocations`,
        `POST /${version}/{resource=**}:getIamPolicy GetIamPolicy`,
        `POST /${version}/{resource=**}:setIamPolicy SetIamPolicy`,
        `POST /${version}/{resource=**}:testIamPermissions TestIamPermissions`,
      ])
      for (const route of mixins) {
        const rpc = route.rpc.split('.').pop() ?? ''
        const request = /Iam/.test(rpc) ? { resource: 'projects/p/locations/l/ragCorpora/1' } : { name: rpc === 'ListOperations' ? 'projects/p/locations/l/ragCorpora/1' : 'projects/p/locations/l/ragCorpora/1/operations/2' }
        const outcome = await route.call(request, undefined, { aborted: false })
        // Operations: an unknown one is NOT_FOUND, a list of an empty collection is served (0); locations and IAM are 12 (501).
        expect(outcome.ok ? 0 : outcome.status.code, rpc).toBe(/Location|Iam/.test(rpc) ? 12 : rpc === 'ListOperations' ? 0 : 5)
      }
    }
  })
})
