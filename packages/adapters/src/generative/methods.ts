import { UNARY, method, unimplemented } from '../rpc/methods.js'
import { generateContent, type PredictionCall } from './generate.js'

const BETA = ['v1beta1']
const read = false
const WHY = 'Quarry serves generateContent on publisher models (a local or plugged-in model over RAG Engine retrieval); other predictions need Google\'s service.'

/**
 * google.cloud.aiplatform.{v1,v1beta1}.PredictionService, every unary method once: generateContent
 * on publisher models served (and streamGenerateContent over REST), the others UNIMPLEMENTED
 * saying why.
 */
export const PREDICTION_TABLE = {
  generateContent: method({
    rpc: 'GenerateContent',
    run: (c: PredictionCall, r) => generateContent(c, r),
    write: read,
    shape: UNARY,
    http: [{ verb: 'POST', path: '{model=projects/*/locations/*/publishers/*/models/*}:generateContent', body: '*' }],
  }),
  // Answered in one message: over REST as one Server-Sent Event (`alt=sse`, what @google/genai and
  // ADK's streaming mode ask) or a one-element array; over gRPC a server stream of one message.
  streamGenerateContent: method({
    rpc: 'StreamGenerateContent',
    run: (c: PredictionCall, r) => generateContent(c, r),
    write: read,
    shape: UNARY,
    http: [{ verb: 'POST', path: '{model=projects/*/locations/*/publishers/*/models/*}:streamGenerateContent', body: '*', stream: true }],
  }),
  predict: method({ rpc: 'Predict', run: unimplemented('Predict', WHY), write: read, shape: UNARY, http: [] }),
  rawPredict: method({ rpc: 'RawPredict', run: unimplemented('RawPredict', WHY), write: read, shape: UNARY, http: [] }),
  directPredict: method({ rpc: 'DirectPredict', run: unimplemented('DirectPredict', WHY), write: read, shape: UNARY, http: [] }),
  directRawPredict: method({ rpc: 'DirectRawPredict', run: unimplemented('DirectRawPredict', WHY), write: read, shape: UNARY, http: [] }),
  explain: method({ rpc: 'Explain', run: unimplemented('Explain', WHY), write: read, shape: UNARY, http: [] }),
  countTokens: method({ rpc: 'CountTokens', run: unimplemented('CountTokens', WHY), write: read, shape: UNARY, versions: BETA, http: [] }),
  embedContent: method({ rpc: 'EmbedContent', run: unimplemented('EmbedContent', WHY), write: read, shape: UNARY, http: [] }),
  // Server streams over gRPC (answered like the unary ones: one status).
  streamRawPredict: method({ rpc: 'StreamRawPredict', run: unimplemented('StreamRawPredict', WHY), write: read, shape: UNARY, http: [] }),
  serverStreamingPredict: method({ rpc: 'ServerStreamingPredict', run: unimplemented('ServerStreamingPredict', WHY), write: read, shape: UNARY, http: [] }),
  chatCompletions: method({ rpc: 'ChatCompletions', run: unimplemented('ChatCompletions', WHY), write: read, shape: UNARY, versions: BETA, http: [] }),
} as const
