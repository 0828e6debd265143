import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { MEMORY_TABLE } from './methods.js'
import type { MemoryBankOptions } from './options.js'
import { MemoryBank } from './service.js'

export type MemoryBankClientOptions = MemoryBankOptions & { memoryBank?: MemoryBank }

// The methods come from MEMORY_TABLE (methods.ts), in Google's calling convention.
export interface MemoryBankServiceClient extends ClientMethods<typeof MEMORY_TABLE> {}

/**
 * In-process stand-in for `v1beta1.MemoryBankServiceClient` of `@google-cloud/aiplatform`:
 * mutations resolve to `[operation, raw]` (`operation.promise()` → `[result, metadata, raw]`),
 * reads to `[response]`, lists page like google-gax; failures reject with an ApiError.
 */
export class MemoryBankServiceClient {
  readonly memoryBank: MemoryBank

  constructor(options: MemoryBankClientOptions = {}) {
    const { memoryBank, ...rest } = options
    this.memoryBank = memoryBank ?? new MemoryBank(rest)
    Object.assign(this, clientOfTable(MEMORY_TABLE, this.memoryBank))
  }
}
