import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The workspace's `quarry` command (it runs the TypeScript sources). */
export const QUARRY_BIN = fileURLToPath(new URL('../../packages/adapters/bin/quarry.mjs', import.meta.url))

export interface ServeProcess {
  readonly child: ChildProcess
  /** The REST port it printed. */
  readonly port: number
  /** The gRPC port it printed (with --grpc-port). */
  readonly grpcPort: number | undefined
  readonly base: string
  /** Everything it printed so far. */
  output(): string
  /** SIGKILL, resolved once it has exited. */
  kill(): Promise<void>
}

/**
 * Starts `quarry serve <args>` in its own process (loopback, `--port 0` unless given) and
 * resolves once it prints where it serves; rejects with its output if it exits first.
 */
export async function startServe(args: readonly string[]): Promise<ServeProcess> {
  const all = args.includes('--port') ? [...args] : ['--port', '0', ...args]
  const child = spawn(process.execPath, [QUARRY_BIN, 'serve', ...all], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const wantGrpc = all.includes('--grpc-port')
  const ports = await new Promise<{ port: number; grpcPort: number | undefined }>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString()
      const rest = /serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      const grpc = /gRPC on 127\.0\.0\.1:(\d+)/.exec(out)
      if (rest && (!wantGrpc || grpc)) resolve({ port: Number(rest[1]), grpcPort: grpc ? Number(grpc[1]) : undefined })
    })
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()))
    child.once('exit', (code) => reject(new Error(`quarry serve exited (${code}) before serving: ${out}`)))
  })
  return {
    child,
    ...ports,
    base: `http://127.0.0.1:${ports.port}`,
    output: () => out,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}
