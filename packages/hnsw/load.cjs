'use strict'
// Which build of the graph to load, as a function of the host (index.cjs passes the real one, tests
// pass stand-ins). QUARRY_HNSW=native forces the native build (or an error saying why it cannot
// load), QUARRY_HNSW=wasm the WebAssembly one; unset, the first that loads of: a build from source
// in this package (src/build/Release, the opt-in `npm run build-from-source`), the prebuilt binary of
// the platform package npm installed for this os/cpu/libc, the WebAssembly build (always shipped).

/** The platform packages, by the platform key of the machines they run on. */
const PLATFORM_PACKAGES = {
  'linux-x64-gnu': '@quarry/hnsw-linux-x64-gnu',
  'linux-arm64-gnu': '@quarry/hnsw-linux-arm64-gnu',
}

const CHOICES = ['native', 'wasm']

/** e.g. linux-x64-gnu, linux-arm64-musl, darwin-arm64, win32-x64. */
function platformKey(platform, arch, glibc) {
  return platform === 'linux' ? `linux-${arch}-${glibc ? 'gnu' : 'musl'}` : `${platform}-${arch}`
}

/** A loader's message with local paths cut to their last part (messages reach users and logs). */
function withoutPaths(message) {
  const first = String(message).split('\n')[0] ?? ''
  return first.replace(/(?<=^|[\s'"(`])(?:[A-Za-z]:)?[\\/](?:[^\s\\/:'"()]+[\\/])*([^\s\\/:'"()]+)/g, '$1').replace(/[\s.:]+$/, '')
}

function graphOf(loaded) {
  const Graph = loaded && loaded.Graph
  if (typeof Graph !== 'function') throw new TypeError('it exports no Graph class')
  return Graph
}

function failure(code, message, fields, cause) {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code, ...fields })
}

/**
 * The native graph, or why not: { Graph, source } or { reason, platform, package?, message }.
 * reason: 'package-missing' (a platform package exists for this platform but is not installed),
 * 'no-binary' (none is built for this platform), 'load-failed' (the binary is there but did not load).
 */
function tryNative(host) {
  // Which libc, only when a message needs it: Node's report takes ~15 ms to make.
  const platform = () => platformKey(host.platform, host.arch, host.glibc())
  if (host.localBuild !== undefined) {
    try {
      return { Graph: graphOf(host.requirePath(host.localBuild)), source: 'build-from-source' }
    } catch (cause) {
      return { reason: 'load-failed', platform: platform(), package: '@quarry/hnsw', message: `the build from source (src/build/Release/quarry_hnsw.node) failed to load: ${withoutPaths(cause && cause.message)}` }
    }
  }
  // npm installs a platform package only where its os, cpu and libc match: one that resolves is this
  // machine's, so glibc is not asked about on the way to the native build.
  const name = PLATFORM_PACKAGES[platformKey(host.platform, host.arch, true)]
  let file
  try {
    file = name === undefined ? undefined : host.resolve(name)
  } catch {
    file = undefined
  }
  if (file !== undefined) {
    try {
      return { Graph: graphOf(host.requirePath(file)), source: name }
    } catch (cause) {
      return { reason: 'load-failed', platform: platform(), package: name, message: `${name} failed to load: ${withoutPaths(cause && cause.message)}` }
    }
  }
  const here = platform()
  const wanted = PLATFORM_PACKAGES[here]
  if (wanted === undefined) return { reason: 'no-binary', platform: here, message: `no prebuilt native graph for ${here}` }
  return { reason: 'package-missing', platform: here, package: wanted, message: `${wanted} is not installed` }
}

function loadWasm(host, nativeUnavailable) {
  try {
    return { Graph: graphOf(host.requireWasm()), backend: 'wasm', source: '@quarry/hnsw/wasm', nativeUnavailable }
  } catch (cause) {
    const why = nativeUnavailable.reason === 'wasm-requested' ? '' : ` (and the native graph: ${nativeUnavailable.message})`
    throw failure('QUARRY_HNSW_WASM_UNAVAILABLE', `the WebAssembly graph of @quarry/hnsw failed to load: ${withoutPaths(cause && cause.message)}${why}`, { nativeUnavailable }, cause)
  }
}

/**
 * @param host {{ env: Record<string, string | undefined>, platform: string, arch: string,
 *   glibc(): boolean, localBuild: string | undefined, resolve(name: string): string,
 *   requirePath(file: string): { Graph: unknown }, requireWasm(): { Graph: unknown } }}
 */
function loadGraph(host) {
  const wanted = host.env.QUARRY_HNSW
  if (wanted !== undefined && wanted !== '' && !CHOICES.includes(wanted)) {
    throw failure('QUARRY_HNSW_INVALID', `QUARRY_HNSW is ${JSON.stringify(wanted)}; set it to native or wasm, or unset it (the native build where one loads, else WebAssembly)`, {})
  }
  if (wanted === 'wasm') {
    const platform = platformKey(host.platform, host.arch, host.glibc())
    return loadWasm(host, { reason: 'wasm-requested', platform, message: 'QUARRY_HNSW=wasm' })
  }
  const native = tryNative(host)
  if (native.Graph) return { Graph: native.Graph, backend: 'native', source: native.source, nativeUnavailable: undefined }
  if (wanted === 'native') {
    const { reason, platform, message } = native
    throw failure('QUARRY_HNSW_NATIVE_UNAVAILABLE', `QUARRY_HNSW=native, but ${message}`, { reason, platform, ...(native.package ? { package: native.package } : {}) })
  }
  return loadWasm(host, native)
}

module.exports = { loadGraph, platformKey, PLATFORM_PACKAGES }
