import type { Reporter, TestModule } from 'vitest/node'

/**
 * Prints one plain closing line, `Summary: N passed, N failed, N skipped`, after vitest's own
 * report, so tools that read only a run's last lines (CI) see the counts, and the reason of each
 * distinct skip note (e.g. the browser tests without a Chromium) just before it.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 }
    const notes = new Set<string>()
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result()
        if (result.state === 'passed') count.passed++
        else if (result.state === 'failed') count.failed++
        else {
          count.skipped++
          if (result.state === 'skipped' && result.note !== undefined) notes.add(result.note)
        }
      }
      // A file that failed to load has no tests: count it as a failure.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) count.failed++
    }
    for (const note of notes) process.stdout.write(`\nSkipped: ${note}`)
    process.stdout.write(`\nSummary: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`)
  }
}
