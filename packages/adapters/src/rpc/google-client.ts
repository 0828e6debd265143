/**
 * The constructor options of Google's Node clients (google-gax ClientOptions). The in-process
 * clients accept them so code written for Google's clients compiles and runs unchanged; none of
 * them changes what a call does (there is no endpoint, transport or credential in process).
 */
export interface GoogleClientOptions {
  apiEndpoint?: string
  servicePath?: string
  port?: number
  protocol?: string
  fallback?: boolean | string
  credentials?: unknown
  keyFilename?: string
  keyFile?: string
  email?: string
  /** What `getProjectId()` resolves to. @defaultValue $GOOGLE_CLOUD_PROJECT, else $GCLOUD_PROJECT, else 'quarry' */
  projectId?: string
  scopes?: string | string[]
  universeDomain?: string
  universe_domain?: string
  apiKey?: string
  authClient?: unknown
  auth?: unknown
  clientConfig?: unknown
  sslCreds?: unknown
  libName?: string
  libVersion?: string
}

/**
 * What every Google Node client has besides its RPCs, in process: `initialize` and `close` (there
 * is no channel to open or close), `getProjectId`, and the `apiEndpoint` / `universeDomain` getters.
 */
export abstract class InProcessClient {
  readonly #apiEndpoint: string
  readonly #universeDomain: string
  readonly #projectId: string

  constructor(options: GoogleClientOptions) {
    this.#apiEndpoint = options.apiEndpoint ?? options.servicePath ?? 'in-process'
    this.#universeDomain = options.universeDomain ?? options.universe_domain ?? 'googleapis.com'
    this.#projectId = options.projectId ?? process.env['GOOGLE_CLOUD_PROJECT'] ?? process.env['GCLOUD_PROJECT'] ?? 'quarry'
  }

  /** The `apiEndpoint` option as given (calls never leave the process). @defaultValue 'in-process' */
  get apiEndpoint(): string {
    return this.#apiEndpoint
  }

  get universeDomain(): string {
    return this.#universeDomain
  }

  /** Nothing to connect: resolves at once (Google's client opens its channel here). */
  async initialize(): Promise<this> {
    return this
  }

  /** Nothing to close: the engine stays usable by other clients. */
  async close(): Promise<void> {}

  /** The `projectId` option, else $GOOGLE_CLOUD_PROJECT, else $GCLOUD_PROJECT, else 'quarry'. */
  async getProjectId(): Promise<string> {
    return this.#projectId
  }
}
