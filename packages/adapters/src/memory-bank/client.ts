import { longRunning, type LongRunningOperation, type OperationLike } from '../rpc/long-running.js'
import { paged, pagedAsync, type PageCallOptions } from '../rpc/paged.js'
import { unary } from '../rpc/unary.js'
import type { MemoryBankOptions } from './options.js'
import type { RetrieveMemoriesResponseJson } from './retrieve.js'
import { MemoryBank } from './service.js'
import type { MemoryJson } from './state.js'

export type MemoryBankClientOptions = MemoryBankOptions & { memoryBank?: MemoryBank }

type Lro<T> = Promise<[LongRunningOperation<T>, OperationLike]>

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
  }

  createMemory(request: unknown): Lro<MemoryJson> {
    return longRunning(this.memoryBank.createMemory(request))
  }
  getMemory(request: unknown): Promise<[MemoryJson]> {
    return unary(this.memoryBank.getMemory(request))
  }
  updateMemory(request: unknown): Lro<MemoryJson> {
    return longRunning(this.memoryBank.updateMemory(request))
  }
  deleteMemory(request: unknown): Lro<Record<string, never>> {
    return longRunning(this.memoryBank.deleteMemory(request))
  }
  listMemories(request: unknown, options?: PageCallOptions): Promise<[MemoryJson[], Record<string, unknown> | null, { memories?: MemoryJson[]; nextPageToken?: string }]> {
    return paged((r) => this.memoryBank.listMemories(r), (r) => r.memories, request, options)
  }
  listMemoriesAsync(request: unknown): AsyncIterable<MemoryJson> {
    return pagedAsync((r) => this.memoryBank.listMemories(r), (r) => r.memories, request)
  }
  retrieveMemories(request: unknown): Promise<[RetrieveMemoriesResponseJson]> {
    return unary(this.memoryBank.retrieveMemories(request))
  }
  generateMemories(request: unknown): Lro<{ generatedMemories?: { memory: MemoryJson; action: string }[] }> {
    return longRunning(this.memoryBank.generateMemories(request))
  }
  purgeMemories(request: unknown): Lro<{ purgeCount?: string }> {
    return longRunning(this.memoryBank.purgeMemories(request))
  }
  getOperation(request: unknown): Promise<[OperationLike]> {
    return unary(this.memoryBank.getOperation(request))
  }
}
