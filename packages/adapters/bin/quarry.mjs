#!/usr/bin/env node
// The `quarry` command: runs the compiled CLI, bundled in dist/bundle/. Inside the Quarry
// workspace, where sources.mjs sits next to this file (it is not published), it runs the
// TypeScript sources instead, so the command works there whether or not the packages were built.
import { existsSync } from 'node:fs'

const workspace = new URL('./sources.mjs', import.meta.url)
const { runCli } = existsSync(workspace) ? await (await import(workspace.href)).loadCli() : await import('../dist/bundle/cli/main.js')
process.exitCode = await runCli(process.argv.slice(2))
