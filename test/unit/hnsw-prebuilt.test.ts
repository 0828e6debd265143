import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { Graph as GraphClass } from '@quarry/hnsw'
import { clustered } from '../support/random.js'

// The committed native binaries of @quarry/hnsw's platform packages (npm/<platform>/): built from
// the sources as they are now (packages/hnsw/scripts/build-native.mjs records the sha256 of every
// input), declared for the os/cpu/libc they run on, answering as a brute-force search does; and
// the package's loader choosing them, or WebAssembly, as QUARRY_HNSW says, in a process of its own.

const HNSW = fileURLToPath(new URL('../../packages/hnsw/', import.meta.url))
const require = createRequire(import.meta.url)
const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex')

interface BuildRecord {
  inputs: { [file: string]: string }
  binary: { file: string; sha256: string; bytes: number }
}
const platforms = readdirSync(join(HNSW, 'npm')).sort()
const manifest = (dir: string): { [key: string]: unknown } => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { [key: string]: unknown }

/** What a binary is built from: the list build-native.mjs records (scripts/native-inputs.cjs). */
const { nativeInputs: inputs } = createRequire(import.meta.url)(join(HNSW, 'scripts', 'native-inputs.cjs')) as { nativeInputs(): string[] }

describe('the prebuilt native graphs', () => {
  it('are built from the current sources (else: node packages/hnsw/scripts/build-native.mjs)', () => {
    expect(platforms).toEqual(['linux-arm64-gnu', 'linux-x64-gnu'])
    for (const platform of platforms) {
      const record = JSON.parse(readFileSync(join(HNSW, 'npm', platform, 'build-inputs.json'), 'utf8')) as BuildRecord
      expect(Object.keys(record.inputs), platform).toEqual(inputs())
      for (const [file, digest] of Object.entries(record.inputs)) expect(sha256(join(HNSW, file)), `${platform}: ${file} changed since the binary was built`).toBe(digest)
      const binary = join(HNSW, 'npm', platform, record.binary.file)
      expect(sha256(binary), `${platform}: the binary is the one recorded`).toBe(record.binary.sha256)
      expect(readFileSync(binary).length).toBe(record.binary.bytes)
      // An ELF shared object for the CPU in the package's name (e_machine: 62 x86-64, 183 AArch64).
      const elf = readFileSync(binary)
      expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF')
      expect(elf.readUInt16LE(18), platform).toBe(platform.includes('arm64') ? 183 : 62)
    }
  })

  it('are platform packages npm installs only where they run, each an optional dependency of @quarry/hnsw and known to its loader', () => {
    const cpu: { [platform: string]: string } = { 'linux-x64-gnu': 'x64', 'linux-arm64-gnu': 'arm64' }
    const names = platforms.map((p) => `@quarry/hnsw-${p}`)
    for (const platform of platforms) {
      const pkg = manifest(join(HNSW, 'npm', platform))
      expect(pkg).toMatchObject({ name: `@quarry/hnsw-${platform}`, os: ['linux'], cpu: [cpu[platform]], libc: ['glibc'], main: './quarry_hnsw.node', files: ['quarry_hnsw.node', 'LICENSE-hnswlib'] })
      expect(pkg.version).toBe(manifest(HNSW).version)
      expect(pkg.scripts, `${platform} has no scripts`).toBeUndefined()
    }
    const hnsw = manifest(HNSW)
    expect(hnsw.optionalDependencies).toEqual(Object.fromEntries(names.map((n) => [n, 'workspace:*'])))
    // No install-time build: no install scripts, and no binding.gyp at the root (npm and pnpm run node-gyp for one).
    expect(hnsw.gypfile).toBe(false)
    expect(Object.keys(hnsw.scripts as object).filter((s) => /^(pre|post)?install$/.test(s))).toEqual([])
    expect(existsSync(join(HNSW, 'binding.gyp'))).toBe(false)
    const { PLATFORM_PACKAGES } = require(join(HNSW, 'load.cjs')) as { PLATFORM_PACKAGES: { [platform: string]: string } }
    expect(PLATFORM_PACKAGES).toEqual(Object.fromEntries(platforms.map((p) => [p, `@quarry/hnsw-${p}`])))
  })

  it.runIf(process.platform === 'linux' && process.arch === 'x64')('linux-x64-gnu answers as brute force does', () => {
    const { Graph } = require(join(HNSW, 'npm', 'linux-x64-gnu', 'quarry_hnsw.node')) as { Graph: typeof GraphClass }
    const dim = 8
    const points = clustered(5, 320, dim, 6)
    const base = points.slice(0, 300)
    const graph = new Graph('l2', dim)
    graph.init(base.length, 16, 200, 100)
    base.forEach((v, i) => graph.add(Float32Array.from(v), i * 3))
    graph.setEf(300)
    for (const q of points.slice(300)) {
      const labels = new Uint32Array(5)
      const distances = new Float32Array(5)
      expect(graph.search(Float32Array.from(q), 5, labels, distances)).toBe(5)
      const exact = base
        .map((v, i) => ({ label: i * 3, d: v.reduce((s, x, j) => s + (x - (q[j] as number)) ** 2, 0) }))
        .sort((a, b) => a.d - b.d || a.label - b.label)
        .slice(0, 5)
      expect([...labels]).toEqual(exact.map((e) => e.label))
      distances.forEach((d, i) => expect(d).toBeCloseTo((exact[i] as { d: number }).d, 4))
    }
  })
})

/** `backend source reason` as @quarry/hnsw reports them in a fresh process with this QUARRY_HNSW. */
function chosen(value: string | undefined): { status: number | null; out: string; err: string } {
  const env = { ...process.env }
  delete env.QUARRY_HNSW
  if (value !== undefined) env.QUARRY_HNSW = value
  const script = "const m = require('./index.cjs'); console.log(m.backend, m.source, m.nativeUnavailable ? m.nativeUnavailable.reason : '-')"
  const run = spawnSync(process.execPath, ['-e', script], { cwd: HNSW, env, encoding: 'utf8' })
  return { status: run.status, out: run.stdout.trim(), err: run.stderr }
}

describe('@quarry/hnsw in a process of its own', () => {
  it.runIf(process.platform === 'linux' && process.arch === 'x64')('loads the native build unless QUARRY_HNSW=wasm; refuses other values', () => {
    const native = existsSync(join(HNSW, 'src', 'build', 'Release', 'quarry_hnsw.node')) ? 'build-from-source' : '@quarry/hnsw-linux-x64-gnu'
    expect(chosen(undefined).out).toBe(`native ${native} -`)
    expect(chosen('native').out).toBe(`native ${native} -`)
    expect(chosen('wasm').out).toBe('wasm @quarry/hnsw/wasm wasm-requested')
    const bad = chosen('fast')
    expect(bad.status).toBe(1)
    expect(bad.err).toContain('QUARRY_HNSW is "fast"; set it to native or wasm, or unset it')
  })

  // The arm64 binary cannot run here natively; with qemu-user and an arm64 node (Debian's
  // nodejs:arm64 unpacked, for instance) it is loaded and must answer as the x64 one does.
  const arm64Node = process.env.QUARRY_ARM64_NODE
  it.runIf(arm64Node !== undefined && process.arch === 'x64')('linux-arm64-gnu answers as linux-x64-gnu does (under qemu-aarch64, QUARRY_ARM64_NODE)', () => {
    const script = `
      const { Graph } = require(process.argv[1]);
      const g = new Graph('l2', 4); g.init(64, 16, 100, 7);
      for (let i = 0; i < 60; i++) g.add(new Float32Array([i % 11, i % 7, i % 5, i % 3]), i * 2);
      g.setEf(64);
      const out = [];
      for (let q = 0; q < 6; q++) {
        const L = new Uint32Array(5), D = new Float32Array(5);
        const n = g.search(new Float32Array([q, q % 4, 2, 1]), 5, L, D);
        out.push([n, ...L, ...D]);
      }
      console.log(JSON.stringify([process.arch, out]));`
    const x64 = JSON.parse(execFileSync(process.execPath, ['-e', script, join(HNSW, 'npm', 'linux-x64-gnu', 'quarry_hnsw.node')], { encoding: 'utf8' })) as [string, number[][]]
    const arm = JSON.parse(execFileSync('qemu-aarch64', ['-L', '/', arm64Node as string, '-e', script, join(HNSW, 'npm', 'linux-arm64-gnu', 'quarry_hnsw.node')], { encoding: 'utf8' })) as [string, number[][]]
    expect(x64[0]).toBe('x64')
    expect(arm[0]).toBe('arm64')
    expect(arm[1]).toEqual(x64[1])
  })
})
