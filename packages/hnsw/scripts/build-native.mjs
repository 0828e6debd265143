#!/usr/bin/env node
// Builds the prebuilt native graph of each platform package (npm/<platform>/quarry_hnsw.node) from
// src/graph.cc, src/saved-graph.h and vendor/hnswlib with node-gyp, and records the sha256 of every
// input and of the binary in npm/<platform>/build-inputs.json. The binaries are committed so that
// neither an install nor a test run compiles anything; test/unit/hnsw-prebuilt.test.ts fails when
// an input changes without a rebuild.
//
//   node packages/hnsw/scripts/build-native.mjs                   every platform below
//   node packages/hnsw/scripts/build-native.mjs linux-arm64-gnu   one of them
//
// The build runs in a temporary copy of the sources, so the package's own src/build/ (the opt-in
// source build, which index.cjs prefers) is left alone. linux-arm64-gnu is cross-compiled with
// Debian's g++-aarch64-linux-gnu.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nativeInputs } from './native-inputs.cjs'

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** Each platform package: node-gyp's --arch and the toolchain that builds for it. */
const TARGETS = {
  'linux-x64-gnu': { arch: 'x64', tools: {} },
  'linux-arm64-gnu': {
    arch: 'arm64',
    tools: { CC: 'aarch64-linux-gnu-gcc', CXX: 'aarch64-linux-gnu-g++', LINK: 'aarch64-linux-gnu-g++', AR: 'aarch64-linux-gnu-ar', STRIP: 'aarch64-linux-gnu-strip' },
  },
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

/** npm's own node-gyp (npm ships one for install scripts), unless npm or pnpm handed us theirs. */
function nodeGyp() {
  const given = process.env.npm_config_node_gyp
  if (given && existsSync(given)) return given
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const npm = join(dir, 'npm')
    if (!existsSync(npm)) continue
    const gyp = join(dirname(realpathSync(npm)), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
    if (existsSync(gyp)) return gyp
  }
  throw new Error('node-gyp not found: run this with npm on PATH (npm bundles node-gyp)')
}

/** A Node install with its headers, so node-gyp need not download them (as scripts/setup.mjs). */
function nodeHeaders() {
  const configured = process.env.npm_config_nodedir
  if (configured && existsSync(join(configured, 'include', 'node', 'node.h'))) return configured
  const prefix = resolve(dirname(process.execPath), '..')
  if (existsSync(join(prefix, 'include', 'node', 'node.h'))) return prefix
  throw new Error('no Node headers found: set npm_config_nodedir to a Node install with include/node/node.h')
}

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status})`)
}

function firstLine(command, args, env) {
  const result = spawnSync(command, args, { encoding: 'utf8', env })
  return (result.stdout ?? '').split('\n')[0]?.trim() ?? ''
}

function build(platform) {
  const target = TARGETS[platform]
  if (!target) throw new Error(`unknown platform ${platform}; known: ${Object.keys(TARGETS).join(', ')}`)
  // A fixed folder: the compiler writes its path into the binary, so the same inputs give the same bytes.
  const work = join(tmpdir(), 'quarry-hnsw-native', platform)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  try {
    const inputs = nativeInputs()
    for (const file of inputs) cpSync(join(pkg, file), join(work, file), { recursive: true })
    const env = {
      ...process.env,
      ...target.tools,
      npm_config_nodedir: nodeHeaders(),
      // binding.gyp finds node-addon-api's headers with require(), from the package's node_modules.
      NODE_PATH: join(pkg, 'node_modules'),
    }
    run(process.execPath, [nodeGyp(), 'rebuild', `--arch=${target.arch}`], { cwd: join(work, 'src'), env })
    const out = join(pkg, 'npm', platform, 'quarry_hnsw.node')
    // Symbols are not needed to load or to read a stack of a crash in hnswlib: strip them.
    run(target.tools.STRIP ?? 'strip', ['--strip-unneeded', '-o', out, join(work, 'src', 'build', 'Release', 'quarry_hnsw.node')], {})
    const addonApi = JSON.parse(readFileSync(join(pkg, 'node_modules', 'node-addon-api', 'package.json'), 'utf8')).version
    const record = {
      note: 'Written by packages/hnsw/scripts/build-native.mjs; test/unit/hnsw-prebuilt.test.ts checks it.',
      inputs: Object.fromEntries(inputs.map((file) => [file, sha256(join(pkg, file))])),
      nodeAddonApi: addonApi,
      compiler: firstLine(target.tools.CXX ?? 'c++', ['--version'], env),
      binary: { file: 'quarry_hnsw.node', sha256: sha256(out), bytes: readFileSync(out).length },
    }
    writeFileSync(join(pkg, 'npm', platform, 'build-inputs.json'), `${JSON.stringify(record, null, 2)}\n`)
    copyFileSync(join(pkg, 'LICENSE'), join(pkg, 'npm', platform, 'LICENSE'))
    copyFileSync(join(pkg, 'vendor', 'hnswlib', 'LICENSE'), join(pkg, 'npm', platform, 'LICENSE-hnswlib'))
    console.log(`${relative(process.cwd(), out)}: ${record.binary.bytes} bytes, sha256 ${record.binary.sha256}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2)
  for (const platform of wanted.length > 0 ? wanted : Object.keys(TARGETS)) build(platform)
}
