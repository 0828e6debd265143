import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { isIP } from 'node:net'
import { SUBJECT_TOKEN_FIELD, SUBJECT_TOKEN_PATH, TOKEN_PATH } from './token-exchange.js'

/**
 * An `external_account` application-default credentials file (the JSON `GOOGLE_APPLICATION_CREDENTIALS`
 * names) that makes google-auth-library fetch its token from a local Quarry server: the subject
 * token from `credential_source.url`, the access token from `token_url`. It holds no secret.
 */
export interface ExternalAccountCredentials {
  /** google-auth-library's workload identity federation credential. */
  readonly type: 'external_account'
  /**
   * Sent along with the exchange; Quarry ignores it. Not Google's `//iam.googleapis.com/projects/N/...`
   * form on purpose: from a project number there google-auth-library would look the project id up
   * online when `GOOGLE_CLOUD_PROJECT` is unset.
   */
  readonly audience: string
  /** What kind of token `credential_source` gives (any is accepted): `urn:ietf:params:oauth:token-type:jwt`. */
  readonly subject_token_type: string
  /** `http://HOST:PORT/v1/token`: the server's RFC 8693 token exchange. */
  readonly token_url: string
  /** A JSON answer `{"subject_token": ...}` at `http://HOST:PORT/quarry/v1/subject-token`. */
  readonly credential_source: {
    readonly url: string
    readonly format: { readonly type: 'json'; readonly subject_token_field_name: string }
  }
}

/** The address to dial for a bound one: a wildcard bind (0.0.0.0, ::) is reached on loopback. */
function dialHost(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const h = bare === '0.0.0.0' || bare === '' ? '127.0.0.1' : bare === '::' || bare === '::0' ? '::1' : bare
  return isIP(h) === 6 ? `[${h}]` : h
}

/** `http://HOST:PORT` of a server bound to `host:port`, as a client on this machine dials it. */
export function localBaseUrl(address: { readonly host: string; readonly port: number }): string {
  if (!Number.isInteger(address.port) || address.port < 1 || address.port > 65535) {
    throw new RangeError(`port must be an integer from 1 to 65535 (the port the server listens on); received ${String(address.port)}`)
  }
  return `http://${dialHost(address.host)}:${address.port}`
}

/**
 * The credentials file for a Quarry server at `host:port` (what `quarry serve --credentials-out`
 * writes, and `QuarryServer.credentials()` returns for the bound address).
 */
export function localCredentials(address: { readonly host: string; readonly port: number }): ExternalAccountCredentials {
  const base = localBaseUrl(address)
  return {
    type: 'external_account',
    audience: '//quarry.localhost/token-exchange',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    token_url: `${base}${TOKEN_PATH}`,
    credential_source: { url: `${base}${SUBJECT_TOKEN_PATH}`, format: { type: 'json', subject_token_field_name: SUBJECT_TOKEN_FIELD } },
  }
}

/**
 * Writes a credentials file readable by its owner only (mode 0600, whatever the umask or the mode
 * of a file it replaces): a temporary file beside it, flushed, then renamed over it.
 */
export function writeCredentialsFile(file: string, credentials: ExternalAccountCredentials): void {
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`)
  // A leftover of a crashed run goes first; 'wx' then never follows a link planted in its place.
  rmSync(temporary, { force: true })
  const fd = openSync(temporary, 'wx', 0o600)
  try {
    fchmodSync(fd, 0o600)
    writeSync(fd, `${JSON.stringify(credentials, null, 2)}\n`)
    fsyncSync(fd)
  } catch (error) {
    closeSync(fd)
    rmSync(temporary, { force: true })
    throw error
  }
  closeSync(fd)
  try {
    renameSync(temporary, file)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
}
