import { InProcessClient, type GoogleClientOptions } from '../rpc/google-client.js'
import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { AIPLATFORM_PATH_HELPERS, type AIPLATFORM_PATH_TEMPLATES, type PathHelpers } from '../rpc/path-templates.js'
import { engineFor } from '../rpc/shared-engines.js'
import { REASONING_ENGINE_TABLE } from './engine-methods.js'
import type { MemoryApiVersion } from './methods.js'
import { MEMORY_BANK_OPTION_KEYS, type MemoryBankOptions } from './options.js'
import { MemoryBank } from './service.js'

/**
 * Options of the in-process client: a MemoryBank whose engines to use, or engine options to make a
 * private one; with neither it uses the shared default one. Google's client options change nothing.
 */
export type ReasoningEngineClientOptions = MemoryBankOptions & GoogleClientOptions & { memoryBank?: MemoryBank; version?: MemoryApiVersion }

// The methods come from REASONING_ENGINE_TABLE (engine-methods.ts), in Google's calling convention.
export interface ReasoningEngineServiceClient extends ClientMethods<typeof REASONING_ENGINE_TABLE>, PathHelpers<typeof AIPLATFORM_PATH_TEMPLATES> {}

/**
 * In-process stand-in for `ReasoningEngineServiceClient` of `@google-cloud/aiplatform` (v1beta1;
 * `version: 'v1'` for v1): create / update / delete resolve to `[operation, raw]`, lists page like
 * google-gax, failures reject with an ApiError. The engines are those of the Memory Bank
 * (`memoryBank.reasoningEngines`).
 */
export class ReasoningEngineServiceClient extends InProcessClient {
  readonly memoryBank: MemoryBank

  constructor(options: ReasoningEngineClientOptions = {}) {
    super(options)
    const { memoryBank, version = 'v1beta1', ...rest } = options
    this.memoryBank = memoryBank ?? engineFor(MemoryBank, rest, MEMORY_BANK_OPTION_KEYS)
    Object.assign(this, clientOfTable(REASONING_ENGINE_TABLE, version === 'v1' ? this.memoryBank.reasoningEngines.v1 : this.memoryBank.reasoningEngines))
  }
}
Object.assign(ReasoningEngineServiceClient.prototype, AIPLATFORM_PATH_HELPERS)
