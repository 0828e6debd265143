import type { Reporter, TestModule } from 'vitest/node'

/**
 * Prints one plain closing line, `Summary: N passed, N failed, N skipped`, after vitest's own
 * report, so tools that read only a run's last lines (CI) see the counts.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 }
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') count.passed++
        else if (state === 'failed') count.failed++
        else count.skipped++
      }
      // A file that failed to load has no tests: count it as a failure.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) count.failed++
    }
    process.stdout.write(`\nSummary: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`)
  }
}
