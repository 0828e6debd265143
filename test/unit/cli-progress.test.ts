import { describe, expect, it } from 'vitest'
import { progress } from '../../packages/adapters/src/cli/progress.js'

/** A log (not a terminal): what the progress bar writes, line by line. */
function log(): { stream: NodeJS.WriteStream; lines: () => string[] } {
  let text = ''
  const stream = { isTTY: false, write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WriteStream
  return { stream, lines: () => text.split('\n').filter((l) => l !== '') }
}

describe('the CLI progress bar in a log', () => {
  it('says one unit without its plural s, and counts the rest as given', () => {
    const one = log()
    const bar = progress('Reading files', 1, 'files', one.stream)
    bar.tick(1, '3 chunks')
    bar.done()
    expect(one.lines().map((l) => l.replace(/ · \d+\/s/, ' · R/s').replace(/in \d+\.\ds/, 'in Ts'))).toEqual(['Reading files [############################] 1/1 file · R/s · 3 chunks · ETA 0s', 'Reading files: 1 file in Ts'])
    const two = log()
    const bars = progress('Embedding', 2, 'chunks', two.stream)
    bars.tick(1)
    bars.tick(2)
    bars.done('cached')
    expect(two.lines().map((l) => l.replace(/ · \d+\/s/, ' · R/s').replace(/ETA \d+s/, 'ETA Es').replace(/in \d+\.\ds/, 'in Ts'))).toEqual([
      'Embedding [##############..............] 1/2 chunks · R/s · ETA Es',
      'Embedding [############################] 2/2 chunks · R/s · ETA Es',
      'Embedding: 2 chunks in Ts (cached)',
    ])
  })
})
