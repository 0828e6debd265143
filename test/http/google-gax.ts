import { createRequire } from 'node:module'

/**
 * Google's aiplatform client and the pieces of its own google-gax the HTTP tests need: the grpc-js
 * it was built with (credentials, status codes), and an OAuth client holding a local token, so the
 * REST transport (`fallback: true`) sends a bearer token without asking Google for one.
 */
const require = createRequire(import.meta.url)
export const aiplatform = require('@google-cloud/aiplatform') as typeof import('@google-cloud/aiplatform')
/** Loads a module as aiplatform does (its own copy of google-gax, grpc-js, proto3-json-serializer). */
export const clientRequire = createRequire(require.resolve('@google-cloud/aiplatform'))

interface FakeAuth {
  setCredentials(credentials: { access_token: string; expiry_date: number }): void
}
const gax = clientRequire('google-gax') as { grpc: typeof import('@grpc/grpc-js'); googleAuthLibrary: { OAuth2Client: new () => FakeAuth } }

/** The clients' own grpc-js. */
export const grpc = gax.grpc

type AuthClient = NonNullable<NonNullable<ConstructorParameters<typeof aiplatform.v1beta1.VertexRagServiceClient>[0]>['authClient']>

/** An OAuth client holding a token valid for an hour: `authClient` of a client pointed at a local server over REST. */
export function localAuth(): AuthClient {
  const auth = new gax.googleAuthLibrary.OAuth2Client()
  auth.setCredentials({ access_token: 'local', expiry_date: Date.now() + 3.6e6 })
  return auth as unknown as AuthClient
}
