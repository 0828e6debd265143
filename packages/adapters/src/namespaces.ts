import { MemoryBankServiceClient, type MemoryBankClientOptions } from './memory-bank/client.js'
import { VertexRagDataServiceClient, VertexRagServiceClient, type VertexRagClientOptions } from './vertex-rag/client.js'

/**
 * `aiplatform.v1` / `aiplatform.v1beta1`-style namespaces, so code written as
 * `new aiplatform.v1beta1.VertexRagServiceClient(opts)` reads the same against Quarry.
 */
export const v1 = {
  VertexRagServiceClient: class extends VertexRagServiceClient {
    constructor(options: VertexRagClientOptions = {}) {
      super({ ...options, version: 'v1' })
    }
  },
  VertexRagDataServiceClient: class extends VertexRagDataServiceClient {
    constructor(options: VertexRagClientOptions = {}) {
      super({ ...options, version: 'v1' })
    }
  },
}

export const v1beta1 = {
  VertexRagServiceClient: class extends VertexRagServiceClient {
    constructor(options: VertexRagClientOptions = {}) {
      super({ ...options, version: 'v1beta1' })
    }
  },
  VertexRagDataServiceClient: class extends VertexRagDataServiceClient {
    constructor(options: VertexRagClientOptions = {}) {
      super({ ...options, version: 'v1beta1' })
    }
  },
  MemoryBankServiceClient: class extends MemoryBankServiceClient {
    constructor(options: MemoryBankClientOptions = {}) {
      super(options)
    }
  },
}
