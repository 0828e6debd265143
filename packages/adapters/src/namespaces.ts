import { MemoryBankServiceClient, type MemoryBankClientOptions } from './memory-bank/client.js'
import { SessionServiceClient, type SessionClientOptions } from './memory-bank/session-client.js'
import { ReasoningEngineServiceClient, type ReasoningEngineClientOptions } from './memory-bank/engine-client.js'
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
  /** Memory Bank under v1 (newer than aiplatform 6.11, which has it in v1beta1 only): the same memories. */
  MemoryBankServiceClient: class extends MemoryBankServiceClient {
    constructor(options: MemoryBankClientOptions = {}) {
      super({ ...options, version: 'v1' })
    }
  },
  /** Agent Engine Sessions under v1: the same sessions as v1beta1's. */
  SessionServiceClient: class extends SessionServiceClient {
    constructor(options: SessionClientOptions = {}) {
      super({ ...options, version: 'v1' })
    }
  },
  /** Agent Engine resources under v1: the same engines as v1beta1's. */
  ReasoningEngineServiceClient: class extends ReasoningEngineServiceClient {
    constructor(options: ReasoningEngineClientOptions = {}) {
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
      super({ ...options, version: 'v1beta1' })
    }
  },
  SessionServiceClient: class extends SessionServiceClient {
    constructor(options: SessionClientOptions = {}) {
      super({ ...options, version: 'v1beta1' })
    }
  },
  ReasoningEngineServiceClient: class extends ReasoningEngineServiceClient {
    constructor(options: ReasoningEngineClientOptions = {}) {
      super({ ...options, version: 'v1beta1' })
    }
  },
}
