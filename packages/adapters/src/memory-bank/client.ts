import { InProcessClient, type GoogleClientOptions } from '../rpc/google-client.js'
import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { AIPLATFORM_PATH_HELPERS, type AIPLATFORM_PATH_TEMPLATES, type PathHelpers } from '../rpc/path-templates.js'
import { engineFor } from '../rpc/shared-engines.js'
import { MEMORY_TABLE, type MemoryApiVersion } from './methods.js'
import { MEMORY_BANK_OPTION_KEYS, type MemoryBankOptions } from './options.js'
import { MemoryBank } from './service.js'

/**
 * Options of the in-process client: a MemoryBank to use, or engine options to make a private one;
 * with neither it uses the shared default one (`defaultEngines()`). Google's client options are
 * accepted and change nothing.
 */
export type MemoryBankClientOptions = MemoryBankOptions & GoogleClientOptions & { memoryBank?: MemoryBank; version?: MemoryApiVersion }

// The methods come from MEMORY_TABLE (methods.ts), in Google's calling convention; the path
// helpers from aiplatform's resource templates.
export interface MemoryBankServiceClient extends ClientMethods<typeof MEMORY_TABLE>, PathHelpers<typeof AIPLATFORM_PATH_TEMPLATES> {}

/**
 * In-process stand-in for `v1beta1.MemoryBankServiceClient` of `@google-cloud/aiplatform`:
 * mutations resolve to `[operation, raw]` (`operation.promise()` → `[result, metadata, raw]`),
 * reads to `[response]`, lists page like google-gax; failures reject with an ApiError.
 * `new MemoryBankServiceClient()` clients share one default Memory Bank. `version: 'v1'` (what
 * `v1.MemoryBankServiceClient` passes) calls the v1 surface: the same memories, v1 operations.
 */
export class MemoryBankServiceClient extends InProcessClient {
  readonly memoryBank: MemoryBank

  constructor(options: MemoryBankClientOptions = {}) {
    super(options)
    const { memoryBank, version = 'v1beta1', ...rest } = options
    this.memoryBank = memoryBank ?? engineFor(MemoryBank, rest, MEMORY_BANK_OPTION_KEYS)
    Object.assign(this, clientOfTable(MEMORY_TABLE, version === 'v1' ? this.memoryBank.v1 : this.memoryBank))
  }
}
Object.assign(MemoryBankServiceClient.prototype, AIPLATFORM_PATH_HELPERS)
