import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/**
 * The import graph of packages/<name>/src and the two rules it must keep (test/unit/layers.test.ts):
 * no cycle, and no import from a lower layer up to a higher one. A layer lists units (a folder,
 * ending in `/`, or a file); a file belongs to the unit with the longest matching prefix. An
 * import may reach its own unit or a unit of a lower layer, never a peer in the same layer: REST,
 * gRPC and the console do not import each other, nor do the three APIs.
 */
export type Layers = readonly (readonly string[])[]

/** Relative imports of one source: static imports, `export … from`, dynamic `import()` (comments ignored). */
export function importsOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName)
}

/** Every .ts file under `dir`, as paths relative to `dir` with `/` separators, sorted. */
function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split('\\').join('/'))
    .sort()
}

/** The graph of one package's `src`: each file (relative to src) → the files of src it imports. */
export function importGraph(srcDir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourcesUnder(srcDir)) {
    const targets = importsOf(readFileSync(join(srcDir, file), 'utf8'))
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(srcDir, resolve(dirname(join(srcDir, file)), spec.replace(/\.js$/, '.ts'))).split('\\').join('/'))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** The cycles of a graph: one concrete loop (`a → b → a`) per strongly connected component. */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v) as number)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop() as string
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component)
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return components.map((component) => loopThrough(graph, new Set(component)))
}

/** A shortest loop from the component's first file (sorted) back to itself, inside the component. */
function loopThrough(graph: ReadonlyMap<string, readonly string[]>, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0] as string
  const previous = new Map<string, string>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i] as string
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue
      if (w === start) {
        const loop = [start]
        for (let u: string | undefined = v; u !== undefined && u !== start; u = previous.get(u)) loop.splice(1, 0, u)
        return [...loop, start]
      }
      if (!previous.has(w)) {
        previous.set(w, v)
        queue.push(w)
      }
    }
  }
  return [start, start]
}

/** The unit a file belongs to (longest matching prefix) and its layer, or undefined. */
export function unitOf(file: string, layers: Layers): { readonly unit: string; readonly layer: number } | undefined {
  let found: { unit: string; layer: number } | undefined
  layers.forEach((units, layer) => {
    for (const unit of units) {
      const matches = unit.endsWith('/') ? file.startsWith(unit) : file === unit
      if (matches && (found === undefined || unit.length > found.unit.length)) found = { unit, layer }
    }
  })
  return found
}

export interface Violation {
  readonly from: string
  readonly to: string
  readonly fromUnit: string
  readonly toUnit: string
  readonly fromLayer: number
  readonly toLayer: number
}

/** Imports that reach a higher layer or a peer unit of the same layer. */
export function upwardImports(graph: ReadonlyMap<string, readonly string[]>, layers: Layers): Violation[] {
  const out: Violation[] = []
  for (const [from, targets] of graph) {
    const a = unitOf(from, layers)
    if (!a) continue
    for (const to of targets) {
      const b = unitOf(to, layers)
      if (!b || b.unit === a.unit || b.layer < a.layer) continue
      out.push({ from, to, fromUnit: a.unit, toUnit: b.unit, fromLayer: a.layer, toLayer: b.layer })
    }
  }
  return out
}

/** Files no unit covers (each must be placed in a layer). */
export function unplaced(graph: ReadonlyMap<string, readonly string[]>, layers: Layers): string[] {
  return [...graph.keys()].filter((file) => unitOf(file, layers) === undefined)
}

/** One line per package for ARCHITECTURE.md: its layers lowest first, peers joined by commas. */
export function renderLayers(name: string, layers: Layers): string {
  return `- \`${name}\`: ${layers.map((units) => units.map((u) => `\`${u}\``).join(', ')).join(' < ')}`
}
