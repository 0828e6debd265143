#!/usr/bin/env node
// The `quarry` command. Runs the compiled CLI when the package is built, else the TypeScript
// sources through tsx (inside this workspace).
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const built = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url))
let runCli
if (existsSync(built)) {
  ;({ runCli } = await import(built))
} else {
  const { register } = await import('tsx/esm/api')
  register()
  ;({ runCli } = await import('../src/cli/main.ts'))
}
process.exitCode = await runCli(process.argv.slice(2))
