import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readConsoleFile } from '../../packages/adapters/src/console/static.js'

/** The console's file reader on a folder of its own: only listed regular files of served types, never a link, a folder or a path. */
let dir = ''
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = ''
})

describe('console files', () => {
  it('reads listed regular files of served types, and nothing else', async () => {
    dir = mkdtempSync(join(tmpdir(), 'quarry-console-static-'))
    const site = join(dir, 'site')
    mkdirSync(site)
    writeFileSync(join(dir, 'secret.js'), 'secret')
    writeFileSync(join(site, 'app.js'), 'export {}\n')
    writeFileSync(join(site, 'style.css'), 'body {}\n')
    writeFileSync(join(site, 'notes.md'), '# not served\n')
    writeFileSync(join(site, '.hidden.js'), 'hidden')
    symlinkSync(join(dir, 'secret.js'), join(site, 'link.js'))
    symlinkSync('/etc/passwd', join(site, 'passwd.txt'))
    mkdirSync(join(site, 'folder.js'))

    expect(await readConsoleFile('app.js', site)).toEqual({ body: Buffer.from('export {}\n'), contentType: 'text/javascript; charset=utf-8' })
    expect(await readConsoleFile('style.css', site)).toEqual({ body: Buffer.from('body {}\n'), contentType: 'text/css; charset=utf-8' })
    for (const name of ['notes.md', '.hidden.js', 'link.js', 'passwd.txt', 'folder.js', '../secret.js', '..%2fsecret.js', '%2e%2e', 'APP.JS', 'app.js/', 'app.js\u0000', '', 'missing.js']) {
      expect(await readConsoleFile(name, site), name).toBeUndefined()
    }
    // A folder that is not there serves nothing.
    expect(await readConsoleFile('app.js', join(dir, 'none'))).toBeUndefined()
  })
})
