/** The command that runs Quarry from inside this repository (pnpm through npx: corepack fails here). */
const REPO_COMMAND = 'npx -y pnpm@12.4.2 quarry'

/**
 * How to run `quarry` again from where the user is, for the hints the commands print: the
 * repository's script when running inside this workspace (through its `quarry` / `demo` scripts,
 * or the TypeScript sources directly), else the installed `quarry` command.
 */
export function quarryCommand(env: NodeJS.ProcessEnv = process.env, script: string = process.argv[1] ?? ''): string {
  if (env.npm_package_name === 'quarry' && (env.npm_lifecycle_event === 'quarry' || env.npm_lifecycle_event === 'demo')) return REPO_COMMAND
  if (/[\\/]packages[\\/]adapters[\\/]src[\\/]cli[\\/]main\.ts$/.test(script)) return REPO_COMMAND
  return 'quarry'
}
