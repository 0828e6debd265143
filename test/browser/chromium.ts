import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

/** Where a Chromium is looked for: CHROMIUM_PATH alone when set; else Debian's path, then PATH. */
export function chromiumCandidates(): string[] {
  if (process.env.CHROMIUM_PATH) return [process.env.CHROMIUM_PATH]
  const fromPath = (process.env.PATH ?? '').split(delimiter).filter(Boolean).flatMap((dir) => ['chromium', 'chromium-browser'].map((bin) => join(dir, bin)))
  return ['/usr/bin/chromium', ...fromPath]
}

/** The first Chromium found, or undefined. */
export function findChromium(): string | undefined {
  return chromiumCandidates().find((path) => existsSync(path))
}

/** What a browser test prints when it is skipped for want of a Chromium. */
export function skipNote(): string {
  return `browser tests skipped: no Chromium found at ${[...new Set(chromiumCandidates())].join(', ')}; install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`
}

/** The flags the tests run Chromium with: headless, offline, no first-run work. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export interface Browser {
  readonly context: BrowserContext
  close(): Promise<void>
}

/** Launches Chromium with a fresh profile folder (removed at close). */
export async function launchChromium(executablePath: string, viewport: { width: number; height: number }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'quarry-chromium-'))
  const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: CHROMIUM_ARGS, viewport })
  return {
    context,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
