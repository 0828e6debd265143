import { InProcessClient, type GoogleClientOptions } from '../rpc/google-client.js'
import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { AIPLATFORM_PATH_HELPERS, type AIPLATFORM_PATH_TEMPLATES, type PathHelpers } from '../rpc/path-templates.js'
import { engineFor } from '../rpc/shared-engines.js'
import type { MemoryApiVersion } from './methods.js'
import { MEMORY_BANK_OPTION_KEYS, type MemoryBankOptions } from './options.js'
import { MemoryBank } from './service.js'
import { SESSION_TABLE } from './session-methods.js'

/**
 * Options of the in-process client: a MemoryBank whose sessions to use, or engine options to make a
 * private one; with neither it uses the shared default one. Google's client options change nothing.
 */
export type SessionClientOptions = MemoryBankOptions & GoogleClientOptions & { memoryBank?: MemoryBank; version?: MemoryApiVersion }

// The methods come from SESSION_TABLE (session-methods.ts), in Google's calling convention.
export interface SessionServiceClient extends ClientMethods<typeof SESSION_TABLE>, PathHelpers<typeof AIPLATFORM_PATH_TEMPLATES> {}

/**
 * In-process stand-in for `SessionServiceClient` of `@google-cloud/aiplatform` (v1beta1; `version:
 * 'v1'`, what `v1.SessionServiceClient` passes, for v1): createSession / deleteSession resolve to
 * `[operation, raw]`, lists page like google-gax, failures reject with an ApiError. The sessions are
 * those of the Memory Bank (`memoryBank.sessions`).
 */
export class SessionServiceClient extends InProcessClient {
  readonly memoryBank: MemoryBank

  constructor(options: SessionClientOptions = {}) {
    super(options)
    const { memoryBank, version = 'v1beta1', ...rest } = options
    this.memoryBank = memoryBank ?? engineFor(MemoryBank, rest, MEMORY_BANK_OPTION_KEYS)
    Object.assign(this, clientOfTable(SESSION_TABLE, version === 'v1' ? this.memoryBank.sessions.v1 : this.memoryBank.sessions))
  }
}
Object.assign(SessionServiceClient.prototype, AIPLATFORM_PATH_HELPERS)
