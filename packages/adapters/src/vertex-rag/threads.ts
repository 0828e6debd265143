import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker, type ResourceLimits } from 'node:worker_threads'
import { PACKAGE_ROOT } from '../package-root.js'

/**
 * Starts a thread running one of this folder's worker entries: built, the bundle's entry
 * (scripts/bundle.mjs), which is what the package ships; or in the workspace its TypeScript source
 * through bin/sources.mjs (tsx, a dev dependency; not in the published package).
 */
export function startThread(entry: 'analysis-worker' | 'bounded-worker', name: string, resourceLimits?: ResourceLimits): Worker {
  const limits = resourceLimits ? { resourceLimits } : {}
  if (!import.meta.url.endsWith('.ts')) return new Worker(join(PACKAGE_ROOT, 'dist', 'bundle', 'vertex-rag', `${entry}.js`), { name, ...limits })
  const sources = pathToFileURL(join(PACKAGE_ROOT, 'bin', 'sources.mjs')).href
  const source = pathToFileURL(join(PACKAGE_ROOT, 'src', 'vertex-rag', `${entry}.ts`)).href
  return new Worker(`import(${JSON.stringify(sources)}).then((m) => m.loadSource(${JSON.stringify(source)}))`, { eval: true, name, ...limits })
}
