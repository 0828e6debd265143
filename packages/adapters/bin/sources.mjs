// Workspace only (not in the published package, see "files"): loads the `quarry` command from the
// TypeScript sources through tsx, resolving @quarry/* with the "quarry-source" export condition as
// the type-checker and the tests do, so @quarry/core is read from its sources too and nothing needs
// to be built. tsx is a devDependency of the workspace root.
import { register } from 'node:module'

const addSourceCondition = `export function resolve(specifier, context, next) {
  if (context.conditions.includes('quarry-source')) return next(specifier, context)
  return next(specifier, { ...context, conditions: [...context.conditions, 'quarry-source'] })
}`

/**
 * Registers the condition and tsx (found from this folder, whatever the current one), then
 * imports a TypeScript source module: `url`, a file URL. The import worker's thread starts this way
 * in the workspace (src/vertex-rag/import-worker.ts).
 */
export async function loadSource(url) {
  register(`data:text/javascript,${encodeURIComponent(addSourceCondition)}`)
  const tsx = await import('tsx/esm/api')
  tsx.register()
  return import(url)
}

/** src/cli/main.ts, through {@link loadSource}. */
export async function loadCli() {
  return loadSource(new URL('../src/cli/main.ts', import.meta.url).href)
}
