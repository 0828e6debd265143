import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cycles, importGraph, importsOf, renderLayers, unplaced, upwardImports, type Layers } from '../support/layers.js'

const ROOT = join(import.meta.dirname, '..', '..')

/**
 * The layers of each package's `src`, lowest first: the one place they are defined (ARCHITECTURE.md
 * prints them, checked below). A unit imports its own files and lower layers only, never a peer.
 */
const LAYERS: Readonly<Record<string, Layers>> = {
  core: [
    ['errors.ts'],
    ['ids.ts', 'cache-dir.ts'],
    ['util/'],
    ['metric/', 'text/'],
    ['dense/', 'sparse/', 'embed/', 'hybrid/', 'filter/'],
    ['engine/'],
    ['persist/'],
    ['engine/quarry-index.ts'],
    ['index.ts', 'testing/'],
  ],
  adapters: [
    ['package-root.ts', 'matches.ts'],
    ['rpc/'],
    ['semantic-retriever/', 'vertex-rag/', 'memory-bank/', 'eval/'],
    ['generative/'],
    ['transport/'],
    ['http/', 'grpc/', 'console/'],
    ['server/'],
    ['default-engines.ts', 'namespaces.ts', 'testing/'],
    ['cli/'],
    ['index.ts'],
  ],
}

/** Packages in dependency order: a package imports only those before it. */
const PACKAGES = ['@quarry/glove', '@quarry/hnsw', '@quarry/core', '@quarry/adapters']

describe('the import layers of packages/*/src', () => {
  for (const [name, layers] of Object.entries(LAYERS)) {
    const src = join(ROOT, 'packages', name, 'src')
    const graph = importGraph(src)
    it(`${name}: every file is in a layer`, () => {
      expect(graph.size).toBeGreaterThan(20)
      expect(unplaced(graph, layers), 'put a new file or folder into a layer of LAYERS here, and into ARCHITECTURE.md').toEqual([])
    })
    it(`${name}: no import circles`, () => {
      expect(cycles(graph).map((loop) => loop.join(' → ')), 'move what both files need into a third, lower one').toEqual([])
    })
    it(`${name}: no import up a layer or across to a peer`, () => {
      const lines = upwardImports(graph, layers).map((v) => `${v.from} → ${v.to} (${v.fromUnit}, layer ${v.fromLayer} → ${v.toUnit}, layer ${v.toLayer})`)
      expect(lines, 'move the imported piece down to a layer both can use').toEqual([])
    })
    it(`${name}: imports only the packages below it`, () => {
      const own = PACKAGES.indexOf(`@quarry/${name}`)
      const upward = readdirSync(src, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .flatMap((f) => importsOf(readFileSync(join(src, f), 'utf8')).filter((spec) => PACKAGES.findIndex((p) => spec === p || spec.startsWith(`${p}/`)) >= own).map((spec) => `${f} → ${spec}`))
      expect(upward).toEqual([])
    })
  }

  it('ARCHITECTURE.md prints the layers as defined here', () => {
    const text = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8')
    for (const [name, layers] of Object.entries(LAYERS)) expect(text).toContain(`${renderLayers(name, layers)}\n`)
  })
})

describe('the checks themselves, on a made-up graph', () => {
  const layers: Layers = [['util/'], ['api/', 'other/'], ['server/'], ['index.ts']]
  const graph = new Map<string, string[]>([
    ['util/a.ts', ['util/b.ts']],
    ['util/b.ts', ['api/x.ts']],
    ['api/x.ts', ['util/a.ts', 'other/y.ts']],
    ['other/y.ts', []],
    ['server/s.ts', ['api/x.ts', 'server/t.ts']],
    ['server/t.ts', ['server/s.ts']],
    ['index.ts', ['server/s.ts']],
    ['loose.ts', []],
  ])

  it('finds each cycle and prints it as a loop', () => {
    expect(cycles(graph)).toEqual([
      ['api/x.ts', 'util/a.ts', 'util/b.ts', 'api/x.ts'],
      ['server/s.ts', 'server/t.ts', 'server/s.ts'],
    ])
    expect(cycles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts', 'a.ts']])
    expect(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([])
  })

  it('finds imports up a layer and across to a peer, not down or within a unit', () => {
    expect(upwardImports(graph, layers)).toEqual([
      { from: 'util/b.ts', to: 'api/x.ts', fromUnit: 'util/', toUnit: 'api/', fromLayer: 0, toLayer: 1 },
      { from: 'api/x.ts', to: 'other/y.ts', fromUnit: 'api/', toUnit: 'other/', fromLayer: 1, toLayer: 1 },
    ])
    expect(unplaced(graph, layers)).toEqual(['loose.ts'])
  })

  it('places a file by its longest unit and reads every kind of import', () => {
    expect(upwardImports(new Map([['engine/x.ts', ['engine/top.ts']]]), [['engine/'], ['engine/top.ts']])).toHaveLength(1)
    const source = [
      "import a from './a.js'",
      "import type { B } from '../b.js'",
      "export { c } from './c.js'",
      "export * from './d.js'",
      "const e = await import('./e.js')",
      "// import f from './f.js'",
      "/* import g from './g.js' */",
      "const h = 'import i from \"./i.js\"'",
    ].join('\n')
    expect(importsOf(source)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js'])
  })
})
