import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import type { NativeUnavailable } from '@quarry/hnsw'

// @quarry/hnsw's choice of build (load.cjs) on pretend hosts: which build each QUARRY_HNSW value and
// each platform gets, in which order the candidates are tried, and the reason recorded when the
// native build is not the one used.

interface Host {
  env: Record<string, string | undefined>
  platform: string
  arch: string
  glibc(): boolean
  localBuild: string | undefined
  resolve(name: string): string
  requirePath(file: string): unknown
  requireWasm(): unknown
}
interface Loaded {
  Graph: unknown
  backend: 'native' | 'wasm'
  source: string
  nativeUnavailable: NativeUnavailable | undefined
}
const { loadGraph, platformKey } = createRequire(import.meta.url)('../../packages/hnsw/load.cjs') as {
  loadGraph: (host: Host) => Loaded
  platformKey: (platform: string, arch: string, glibc: boolean) => string
}

class LocalGraph {}
class PrebuiltGraph {}
class WasmGraph {}

/** A host where the local build, the platform packages in `installed` and the wasm all load; records every require. */
function host(over: Partial<Host> & { installed?: readonly string[]; local?: boolean }): { host: Host; required: string[] } {
  const required: string[] = []
  const installed = over.installed ?? []
  const base: Host = {
    env: {},
    platform: 'linux',
    arch: 'x64',
    glibc: () => true,
    localBuild: over.local ? '/app/node_modules/@quarry/hnsw/src/build/Release/quarry_hnsw.node' : undefined,
    resolve: (name) => {
      if (!installed.includes(name)) throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' })
      return `/app/node_modules/${name}/quarry_hnsw.node`
    },
    requirePath: (file) => {
      required.push(file)
      return { Graph: file.includes('/src/build/') ? LocalGraph : PrebuiltGraph }
    },
    requireWasm: () => {
      required.push('wasm')
      return { Graph: WasmGraph }
    },
  }
  const { installed: _installed, local: _local, ...rest } = over
  return { host: { ...base, ...rest }, required }
}

const X64 = '@quarry/hnsw-linux-x64-gnu'
const ARM64 = '@quarry/hnsw-linux-arm64-gnu'

describe('@quarry/hnsw chooses its build', () => {
  it('unset: the build from source, else the platform package, else WebAssembly with the reason', () => {
    const local = host({ local: true, installed: [X64] })
    expect(loadGraph(local.host)).toEqual({ Graph: LocalGraph, backend: 'native', source: 'build-from-source', nativeUnavailable: undefined })
    expect(local.required).toEqual(['/app/node_modules/@quarry/hnsw/src/build/Release/quarry_hnsw.node'])

    const prebuilt = host({ installed: [X64, ARM64] })
    expect(loadGraph(prebuilt.host)).toEqual({ Graph: PrebuiltGraph, backend: 'native', source: X64, nativeUnavailable: undefined })
    expect(prebuilt.required).toEqual([`/app/node_modules/${X64}/quarry_hnsw.node`])
    const arm = host({ arch: 'arm64', installed: [X64, ARM64] })
    expect(loadGraph(arm.host).source).toBe(ARM64)
    expect(arm.required).toEqual([`/app/node_modules/${ARM64}/quarry_hnsw.node`])

    // Installed for x64 only (npm installs the package of the machine it runs on), asked on arm64.
    const missing = host({ arch: 'arm64', installed: [X64] })
    expect(loadGraph(missing.host)).toEqual({
      Graph: WasmGraph,
      backend: 'wasm',
      source: '@quarry/hnsw/wasm',
      nativeUnavailable: { reason: 'package-missing', platform: 'linux-arm64-gnu', package: ARM64, message: `${ARM64} is not installed` },
    })
    expect(missing.required).toEqual(['wasm'])
  })

  it('platforms without a binary (macOS, Windows, musl, other CPUs) get WebAssembly, saying so', () => {
    const cases: Array<[Partial<Host>, string]> = [
      [{ platform: 'darwin', arch: 'arm64' }, 'darwin-arm64'],
      [{ platform: 'win32', arch: 'x64' }, 'win32-x64'],
      [{ glibc: () => false }, 'linux-x64-musl'],
      [{ arch: 'riscv64' }, 'linux-riscv64-gnu'],
    ]
    for (const [over, platform] of cases) {
      // npm installs no platform package on these; the linux-gnu ones are there for the other three.
      const { host: h, required } = host({ ...over, installed: over.glibc ? [] : [X64, ARM64] })
      const loaded = loadGraph(h)
      expect(loaded.backend, platform).toBe('wasm')
      expect(loaded.Graph).toBe(WasmGraph)
      expect(loaded.nativeUnavailable).toEqual({ reason: 'no-binary', platform, message: `no prebuilt native graph for ${platform}` })
      expect(required, platform).toEqual(['wasm'])
    }
    expect(platformKey('linux', 'arm64', false)).toBe('linux-arm64-musl')
    // The libc is asked only to explain a fallback: a platform package that resolves is this machine's.
    let asked = 0
    const counted = host({ installed: [X64], glibc: () => (asked++, true) })
    expect(loadGraph(counted.host).source).toBe(X64)
    expect(asked).toBe(0)
    expect(loadGraph(host({ glibc: () => (asked++, false) }).host).nativeUnavailable).toEqual({ reason: 'no-binary', platform: 'linux-x64-musl', message: 'no prebuilt native graph for linux-x64-musl' })
    expect(asked).toBe(1)
    expect(platformKey('freebsd', 'x64', false)).toBe('freebsd-x64')
  })

  it('a binary that fails to load falls back to WebAssembly with its message, without local paths', () => {
    const { host: h } = host({
      installed: [X64],
      requirePath: (file) => {
        throw new Error(`/lib/x86_64-linux-gnu/libc.so.6: version \`GLIBC_2.32' not found (required by ${file})\n    at Module._extensions..node`)
      },
    })
    expect(loadGraph(h).nativeUnavailable).toEqual({
      reason: 'load-failed',
      platform: 'linux-x64-gnu',
      package: X64,
      message: `${X64} failed to load: libc.so.6: version \`GLIBC_2.32' not found (required by quarry_hnsw.node)`,
    })
    // A module without a Graph class is a failed load too.
    const { host: empty } = host({ installed: [X64], requirePath: () => ({}) })
    expect(loadGraph(empty).nativeUnavailable?.message).toBe(`${X64} failed to load: it exports no Graph class`)
  })

  it('QUARRY_HNSW=wasm never loads the native build; QUARRY_HNSW=native never falls back', () => {
    const wasm = host({ env: { QUARRY_HNSW: 'wasm' }, local: true, installed: [X64] })
    expect(loadGraph(wasm.host)).toEqual({
      Graph: WasmGraph,
      backend: 'wasm',
      source: '@quarry/hnsw/wasm',
      nativeUnavailable: { reason: 'wasm-requested', platform: 'linux-x64-gnu', message: 'QUARRY_HNSW=wasm' },
    })
    expect(wasm.required).toEqual(['wasm'])

    const native = host({ env: { QUARRY_HNSW: 'native' }, installed: [X64] })
    expect(loadGraph(native.host).backend).toBe('native')
    const failed = host({ env: { QUARRY_HNSW: 'native' }, platform: 'darwin', arch: 'arm64' })
    expect(() => loadGraph(failed.host)).toThrow(expect.objectContaining({ code: 'QUARRY_HNSW_NATIVE_UNAVAILABLE', reason: 'no-binary', platform: 'darwin-arm64' }))
    expect(failed.required).toEqual([])
    const left = host({ env: { QUARRY_HNSW: 'native' } })
    expect(() => loadGraph(left.host)).toThrow(
      expect.objectContaining({ code: 'QUARRY_HNSW_NATIVE_UNAVAILABLE', reason: 'package-missing', package: X64, message: `QUARRY_HNSW=native, but ${X64} is not installed` }),
    )
    expect(left.required).toEqual([])

    // Empty is unset; anything else is refused, naming the valid values.
    expect(loadGraph(host({ env: { QUARRY_HNSW: '' }, installed: [X64] }).host).source).toBe(X64)
    for (const value of ['Native', 'WASM', 'auto', 'js']) {
      const bad = host({ env: { QUARRY_HNSW: value }, installed: [X64] })
      expect(() => loadGraph(bad.host)).toThrow(
        expect.objectContaining({ code: 'QUARRY_HNSW_INVALID', message: `QUARRY_HNSW is "${value}"; set it to native or wasm, or unset it (the native build where one loads, else WebAssembly)` }),
      )
      expect(bad.required).toEqual([])
    }
  })

  it('when the WebAssembly build fails too, the error names both causes', () => {
    const { host: h } = host({
      platform: 'darwin',
      arch: 'x64',
      requireWasm: () => {
        throw new Error("Cannot find module '/app/node_modules/@quarry/hnsw/wasm/quarry_hnsw.wasm'")
      },
    })
    expect(() => loadGraph(h)).toThrow(
      expect.objectContaining({
        code: 'QUARRY_HNSW_WASM_UNAVAILABLE',
        message: "the WebAssembly graph of @quarry/hnsw failed to load: Cannot find module 'quarry_hnsw.wasm' (and the native graph: no prebuilt native graph for darwin-x64)",
      }),
    )
  })
})
