import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { usageError } from './fail.js'

interface PluginSpec {
  /** The flag that named the module, for messages: `--extractor`. */
  readonly flag: string
  /** The named export read when there is no default export: `extractor`. */
  readonly exportName: string
  /** The command's usage, printed after a usage error. */
  readonly usage: string
}

/**
 * A function a module given on the command line exports (`quarry serve --extractor ./x.mjs`): its
 * default export, else its export named `spec.exportName`. The path is relative to the working
 * folder. A missing file, a module that fails to load, or one without such a function is a usage
 * error (exit 2) saying which.
 */
export async function loadPlugin(path: string, spec: PluginSpec): Promise<(...args: never[]) => unknown> {
  const file = resolve(path)
  if (!existsSync(file) || !statSync(file).isFile()) throw usageError(`${spec.flag} ${path}: no such file; give the path of an ES module (.mjs or .js)`, spec.usage)
  let module: Record<string, unknown>
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw usageError(`${spec.flag} ${path} could not be loaded: ${reason}`, spec.usage)
  }
  const found = typeof module['default'] === 'function' ? module['default'] : module[spec.exportName]
  if (typeof found !== 'function') {
    const exported = Object.keys(module)
    throw usageError(`${spec.flag} ${path} must export a function, as its default export or as "${spec.exportName}"; it exports ${exported.length === 0 ? 'nothing' : exported.join(', ')}`, spec.usage)
  }
  return found as (...args: never[]) => unknown
}
