import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * The local end of application-default credentials (issue 17). Google's REST SDKs (`@google/genai`,
 * `@google-cloud/vertexai`'s `Client`, ADK, google-gax with `fallback: true`) always fetch an OAuth
 * token through google-auth-library. An `external_account` credentials file whose `token_url` is
 * this server makes that fetch local: the library GETs a subject token from
 * {@link SUBJECT_TOKEN_PATH} (its `credential_source.url`), then exchanges it at
 * {@link TOKEN_PATH} as RFC 8693 says, with the form google-auth-library 10 sends
 * (`stscredentials.ts`): `grant_type`, `subject_token`, `subject_token_type`, `audience`, `scope`,
 * `requested_token_type`. Any subject token is accepted: Quarry checks no `Authorization` header,
 * the token only exists because the SDKs will not call without one.
 */

/** Where the token exchange is posted: the path of Google's STS (`https://sts.googleapis.com/v1/token`). */
export const TOKEN_PATH = '/v1/token'
/** Where the credentials file's `credential_source.url` reads its subject token (Quarry's own path). */
export const SUBJECT_TOKEN_PATH = '/quarry/v1/subject-token'
/** The field of the {@link SUBJECT_TOKEN_PATH} JSON answer holding the token (`format.subject_token_field_name`). */
export const SUBJECT_TOKEN_FIELD = 'subject_token'
/** The subject token served locally (any other is accepted as well). */
const LOCAL_SUBJECT_TOKEN = 'quarry-local-subject-token'
/** The access token every exchange answers; nothing checks it. */
export const LOCAL_ACCESS_TOKEN = 'quarry-local-access-token'
/**
 * Seconds an access token is said to last: Google's STS default (one hour). google-auth-library
 * refreshes 5 minutes before, so a long-running client exchanges again every 55 minutes.
 */
export const TOKEN_LIFETIME_SECONDS = 3600

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'
/** A token request is a short form; subject tokens (JWTs, SAML assertions) stay far below this. */
const MAX_TOKEN_BODY = 64 * 1024

/** Whether a path is one of the two answered here (matched before the API routes). */
export function isTokenPath(path: string): boolean {
  return path === TOKEN_PATH || path === SUBJECT_TOKEN_PATH
}

/** An OAuth 2.0 error answer (RFC 6749 §5.2): `{"error", "error_description"}`, never a stack. */
class OAuthFailure extends Error {
  constructor(
    readonly httpStatus: number,
    readonly error: 'invalid_request' | 'unsupported_grant_type',
    description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description)
  }
}

/** Token answers must not be cached (RFC 6749 §5.1). */
function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', pragma: 'no-cache', ...headers })
  res.end(text)
}

/** The form of the token request, from its body (read by the server's admission before any route). */
function readForm(req: IncomingMessage, body: Buffer): URLSearchParams {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? ''
  if (type !== 'application/x-www-form-urlencoded') {
    throw new OAuthFailure(400, 'invalid_request', `Send the token request form-encoded (Content-Type application/x-www-form-urlencoded, RFC 8693); received ${type === '' ? 'no Content-Type' : `"${type.slice(0, 100)}"`}.`)
  }
  const tooLarge = new OAuthFailure(413, 'invalid_request', `The token request is larger than ${MAX_TOKEN_BODY} bytes.`)
  if (Number(req.headers['content-length'] ?? 0) > MAX_TOKEN_BODY) throw tooLarge
  if (body.length > MAX_TOKEN_BODY) throw tooLarge
  return new URLSearchParams(body.toString('utf8'))
}

/** A parameter given at most once (RFC 6749 §3.2), or undefined when absent or empty. */
function param(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name)
  if (values.length > 1) throw new OAuthFailure(400, 'invalid_request', `${name} is given ${values.length} times; send it once.`)
  return values[0] === '' ? undefined : values[0]
}

function required(form: URLSearchParams, name: string, example: string): string {
  const value = param(form, name)
  if (value === undefined) throw new OAuthFailure(400, 'invalid_request', `${name} is required (${example}).`)
  return value
}

/** The RFC 8693 exchange: checks the form, then answers the local access token. */
function exchange(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  if (req.method !== 'POST') throw new OAuthFailure(405, 'invalid_request', `${TOKEN_PATH} takes POST (an RFC 8693 token exchange); received ${String(req.method).slice(0, 20)}.`, { allow: 'POST' })
  const form = readForm(req, body)
  const grant = required(form, 'grant_type', GRANT_TYPE)
  if (grant !== GRANT_TYPE) throw new OAuthFailure(400, 'unsupported_grant_type', `grant_type must be ${GRANT_TYPE}; received "${grant.slice(0, 100)}".`)
  required(form, 'subject_token', 'any value: every subject token is accepted locally')
  required(form, 'subject_token_type', 'e.g. urn:ietf:params:oauth:token-type:jwt')
  const requested = param(form, 'requested_token_type')
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE) {
    throw new OAuthFailure(400, 'invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE} (the only kind issued here); received "${requested.slice(0, 100)}".`)
  }
  // audience, scope, resource, options and actor tokens are accepted as sent: nothing here depends on them.
  sendJson(res, 200, { access_token: LOCAL_ACCESS_TOKEN, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS })
}

function subjectToken(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET') throw new OAuthFailure(405, 'invalid_request', `${SUBJECT_TOKEN_PATH} takes GET (the credentials file's credential_source.url); received ${String(req.method).slice(0, 20)}.`, { allow: 'GET' })
  sendJson(res, 200, { [SUBJECT_TOKEN_FIELD]: LOCAL_SUBJECT_TOKEN })
}

/**
 * Answers {@link TOKEN_PATH} or {@link SUBJECT_TOKEN_PATH} (the request is already admitted by the
 * Host / Origin guard). Bad requests get OAuth error JSON; anything unexpected is rethrown for the
 * server's INTERNAL answer.
 */
export async function answerTokenPath(req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): Promise<void> {
  try {
    if (path === TOKEN_PATH) exchange(req, res, body)
    else subjectToken(req, res)
  } catch (error) {
    if (!(error instanceof OAuthFailure)) throw error
    // What is left of a refused body is dropped and the connection closed after the answer (the
    // SDKs never get here; a client that does reconnects).
    req.resume()
    sendJson(res, error.httpStatus, { error: error.error, error_description: error.message }, { ...error.headers, connection: 'close' })
  }
}
