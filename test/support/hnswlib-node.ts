import { createRequire } from 'node:module'

/**
 * hnswlib-node, the tests' reference graph (the same hnswlib behind another binding): an optional
 * dependency of the workspace, since node-gyp compiles it at install and that needs python3, make
 * and a C++ compiler. Where it could not be built the install still succeeds (the quick start
 * needs only Node and npm), and the comparisons with it are skipped with {@link HNSWLIB_SKIP_NOTE};
 * .ci/run's machine has the compiler, so CI runs them.
 */
export function hnswlibNode<T>(): T | undefined {
  try {
    return createRequire(new URL('../../package.json', import.meta.url))('hnswlib-node') as T
  } catch {
    return undefined
  }
}

export const HNSWLIB_SKIP_NOTE = 'hnswlib-node (the reference graph) is not built here: node-gyp needs python3, make and a C++ compiler at install; the comparisons with it are skipped'
