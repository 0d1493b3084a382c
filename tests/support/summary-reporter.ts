import type { Reporter, TestModule } from "vitest/node";

/** Ends the run with one plain line, "N passed, N failed, N skipped", that CI tooling reads. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      const failedBefore = counts.failed;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") counts.failed++;
        else counts.skipped++;
      }
      // A file that failed with no failed test (it did not load, or a beforeAll threw and its tests were skipped) counts once.
      if (module.state() === "failed" && counts.failed === failedBefore) counts.failed++;
    }
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
