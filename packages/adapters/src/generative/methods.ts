import { UNARY, method, unimplemented, type HttpBinding } from '../rpc/methods.js'
import { generateContent, type PredictionCall } from './generate.js'

const BETA = ['v1beta1']
const read = false
const WHY = 'Quarry serves generateContent on publisher models (a local or plugged-in model over RAG Engine retrieval); other predictions need Google\'s service.'

const E = 'projects/*/locations/*/endpoints/*'
const M = 'projects/*/locations/*/publishers/*/models/*'

/**
 * The project-located POST bindings of Google's http rules for `:verb` on `field`: an unserved method
 * answers 501 UNIMPLEMENTED saying why, where a path Google does not have answers 404.
 */
function post(field: string, verb: string, resources: readonly string[]): readonly HttpBinding[] {
  return resources.map((resource) => ({ verb: 'POST', path: `{${field}=${resource}}:${verb}`, body: '*' }))
}

/**
 * google.cloud.aiplatform.{v1,v1beta1}.PredictionService, every unary method once: generateContent
 * on publisher models served (and streamGenerateContent over REST), the others UNIMPLEMENTED
 * saying why (over REST too, at Google's project-located paths; chatCompletions' body is an HttpBody, so it has none).
 */
export const PREDICTION_TABLE = {
  generateContent: method({
    rpc: 'GenerateContent',
    run: (c: PredictionCall, r) => generateContent(c, r),
    write: read,
    shape: UNARY,
    // On an endpoint: UNIMPLEMENTED, saying so (generate.ts), as over gRPC.
    http: post('model', 'generateContent', [M, E]),
  }),
  // Answered in one message: over REST as one Server-Sent Event (`alt=sse`, what @google/genai and
  // ADK's streaming mode ask) or a one-element array; over gRPC a server stream of one message.
  streamGenerateContent: method({
    rpc: 'StreamGenerateContent',
    run: (c: PredictionCall, r) => generateContent(c, r),
    write: read,
    shape: UNARY,
    http: post('model', 'streamGenerateContent', [M, E]).map((binding) => ({ ...binding, stream: true })),
  }),
  predict: method({ rpc: 'Predict', run: unimplemented('Predict', WHY), write: read, shape: UNARY, http: post('endpoint', 'predict', [E, M]) }),
  rawPredict: method({ rpc: 'RawPredict', run: unimplemented('RawPredict', WHY), write: read, shape: UNARY, http: post('endpoint', 'rawPredict', [E, M]) }),
  directPredict: method({ rpc: 'DirectPredict', run: unimplemented('DirectPredict', WHY), write: read, shape: UNARY, http: post('endpoint', 'directPredict', [E]) }),
  directRawPredict: method({ rpc: 'DirectRawPredict', run: unimplemented('DirectRawPredict', WHY), write: read, shape: UNARY, http: post('endpoint', 'directRawPredict', [E]) }),
  explain: method({ rpc: 'Explain', run: unimplemented('Explain', WHY), write: read, shape: UNARY, http: post('endpoint', 'explain', [E]) }),
  countTokens: method({ rpc: 'CountTokens', run: unimplemented('CountTokens', WHY), write: read, shape: UNARY, versions: BETA, http: post('endpoint', 'countTokens', [E, M]) }),
  embedContent: method({ rpc: 'EmbedContent', run: unimplemented('EmbedContent', WHY), write: read, shape: UNARY, http: post('model', 'embedContent', [M]) }),
  // Server streams over gRPC (answered like the unary ones: one status).
  streamRawPredict: method({ rpc: 'StreamRawPredict', run: unimplemented('StreamRawPredict', WHY), write: read, shape: UNARY, http: post('endpoint', 'streamRawPredict', [E, M]) }),
  serverStreamingPredict: method({ rpc: 'ServerStreamingPredict', run: unimplemented('ServerStreamingPredict', WHY), write: read, shape: UNARY, http: post('endpoint', 'serverStreamingPredict', [E, M]) }),
  chatCompletions: method({ rpc: 'ChatCompletions', run: unimplemented('ChatCompletions', WHY), write: read, shape: UNARY, versions: BETA, http: [] }),
} as const
