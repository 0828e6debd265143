import { isIP } from 'node:net'

/**
 * Who may talk to the local server. A server on loopback is still reachable from every web page
 * the user opens: a page can send "simple" cross-site requests, and with DNS rebinding (its own
 * host name re-pointed at 127.0.0.1) even read the answers. So, like Vite's dev server
 * (`server.allowedHosts`, `server.cors`):
 *
 * - **Host.** Answered only when the `Host` header names this machine: `localhost` or a
 *   `*.localhost` name, an IP address (a rebinding page cannot make its browser send an IP
 *   literal for its own name), the host the server was bound to, or a name given with
 *   `--allowed-host` (`.example.com` also allows its subdomains; `all` turns the check off).
 * - **Origin.** A request carrying an `Origin` (every cross-site request a browser sends but a
 *   plain GET) must come from the server's own origin or one given with `--cors-origin`; those
 *   get CORS answers, preflights included. Browsers send `Origin: null` from sandboxed frames
 *   and files: refused unless allowed by name.
 * - **Fetch Metadata.** Navigations, frames, images and scripts carry no `Origin`, and
 *   `*.localhost` passes the Host rule, so a page of another site could still open event streams
 *   or fire GETs in frames. Browsers say where a request comes from (`Sec-Fetch-Site`): from
 *   another site, or another port of this one (`same-site`: a page on localhost:3000), it is
 *   refused unless its `Origin` is allowed by `--cors-origin` or it is a top-level navigation to
 *   the console's page. Clients that send no Fetch Metadata (curl, gRPC, Google's clients) are
 *   not browsers, and pass.
 * - **Content types** are checked where the body is read (JSON routes take `application/json`
 *   only, so a form or `text/plain` post, which browsers send without a preflight, is refused).
 */
export interface AccessOptions {
  /** Host names accepted besides this machine's own (`.example.com`: it and its subdomains; `all`: any). */
  readonly allowedHosts?: readonly string[]
  /** Origins (`https://app.example.com`, scheme://host[:port]) whose pages may call the server; `*`: any. */
  readonly corsOrigins?: readonly string[]
}

type Access =
  | { readonly ok: true; readonly cors: string | undefined }
  | { readonly ok: false; readonly message: string }

/** `name[:port]` or `[ipv6][:port]`. */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]+(?:%[\w.~-]+)?\]|[\w.-]+)(?::\d{1,5})?$/

/** The host name of a Host header value (`[::1]:8080` → `::1`, `Example.COM.:80` → `example.com`). */
function hostName(host: string): string {
  const h = host.trim().toLowerCase()
  const bracket = /^\[([^\]]+)\](?::\d*)?$/.exec(h)
  if (bracket) return bracket[1] as string
  const colon = h.lastIndexOf(':')
  const name = colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h
  return name.endsWith('.') ? name.slice(0, -1) : name
}

function hostAllowed(name: string, boundHost: string | undefined, allowed: readonly string[]): boolean {
  if (name === 'localhost' || name.endsWith('.localhost') || isIP(name) !== 0) return true
  if (boundHost !== undefined && name === hostName(boundHost)) return true
  return allowed.some((a) => {
    const rule = a.toLowerCase()
    if (rule === 'all') return true
    if (rule.startsWith('.')) return name === rule.slice(1) || name.endsWith(rule)
    return name === rule
  })
}

/** Lowercased `scheme://host[:port]` with the default port dropped, or undefined if not an origin. */
function normalOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin)
    return url.origin === 'null' ? undefined : url.origin
  } catch {
    return undefined
  }
}

/**
 * Decides whether a request may be served, and which origin its CORS headers name (undefined: no
 * CORS headers, a same-origin or non-browser request).
 */
export function checkAccess(headers: { readonly host?: string | undefined; readonly origin?: string | undefined }, boundHost: string | undefined, options: AccessOptions): Access {
  const host = headers.host
  // A Host is a name or an IP literal and an optional port, nothing else (`localhost:80@evil` would
  // pass a lenient parse here and then turn into another origin in the Origin comparison).
  if (host !== undefined && (!HOST_SYNTAX.test(host.trim()) || !hostAllowed(hostName(host), boundHost, options.allowedHosts ?? []))) {
    return { ok: false, message: `Host "${host.slice(0, 200)}" is not allowed: Quarry answers requests for this machine only (localhost, IP addresses). Start it with --allowed-host NAME (the allowedHosts option) to answer for another name.` }
  }
  const origin = headers.origin
  if (origin === undefined) return { ok: true, cors: undefined }
  const allowed = options.corsOrigins ?? []
  if (allowed.includes('*')) return { ok: true, cors: origin }
  if (allowed.includes(origin)) return { ok: true, cors: origin }
  const normal = normalOrigin(origin)
  if (normal !== undefined && host !== undefined && (normal === normalOrigin(`http://${host}`) || normal === normalOrigin(`https://${host}`))) return { ok: true, cors: undefined }
  if (normal !== undefined && allowed.some((a) => normalOrigin(a) === normal)) return { ok: true, cors: origin }
  return { ok: false, message: `Origin "${origin.slice(0, 200)}" is not allowed: web pages of other sites cannot call Quarry. Start it with --cors-origin ORIGIN (the corsOrigins option) to let that site's pages call it.` }
}

/**
 * {@link checkAccess} remembering its verdict on the last Host of a request without an Origin
 * (clients send the same Host on every request, so the Host rule runs once per client and bound
 * address, not per request). Requests with an Origin are judged each time.
 */
export function accessCheck(options: AccessOptions): (headers: { readonly host?: string | undefined; readonly origin?: string | undefined }, boundHost: string | undefined) => Access {
  let last: { readonly host: string | undefined; readonly boundHost: string | undefined; readonly verdict: Access } | undefined
  return (headers, boundHost) => {
    if (headers.origin !== undefined) return checkAccess(headers, boundHost, options)
    if (last !== undefined && last.host === headers.host && last.boundHost === boundHost) return last.verdict
    last = { host: headers.host, boundHost, verdict: checkAccess(headers, boundHost, options) }
    return last.verdict
  }
}

/** The headers of a CORS answer for an allowed origin. */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, vary: 'Origin' }
}

/** The headers answering a CORS preflight (OPTIONS) for an allowed origin. */
export function preflightHeaders(origin: string, requestedHeaders: string | undefined): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'access-control-allow-methods': 'GET, POST, PATCH, DELETE',
    // The headers Google's clients send (x-goog-*, authorization) and whatever else the page asks for.
    'access-control-allow-headers': (requestedHeaders ?? 'content-type').slice(0, 1000),
    'access-control-max-age': '600',
  }
}

/** The Fetch Metadata of a request from a browser (`Sec-Fetch-Site`, `-Mode`, `-Dest`). */
export interface FetchMetadata {
  readonly site: string
  readonly mode: string | undefined
  readonly dest: string | undefined
}

/**
 * Refuses (with the message) a request a page of another site made — `Sec-Fetch-Site` `cross-site`
 * or `same-site` — unless CORS allowed its origin (`corsAllowed`) or it is a top-level navigation
 * to the console's page (`isPage`). Undefined: admitted. Requests without the header (non-browser
 * clients) are not asked about: the caller skips them.
 */
export function refuseOtherSite(fetch: FetchMetadata, corsAllowed: boolean, isPage: boolean): string | undefined {
  const site = fetch.site
  if (site === 'same-origin' || site === 'none' || corsAllowed) return undefined
  if (isPage && fetch.mode === 'navigate' && fetch.dest === 'document') return undefined
  return `A request from a page of another site (Sec-Fetch-Site: ${site.slice(0, 20)}) is refused: open the console's page itself, or start Quarry with --cors-origin ORIGIN (the corsOrigins option) to let that site's pages call it.`
}
