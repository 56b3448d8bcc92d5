// `npm test` runs on PGlite and skips the tests that need a real PostgreSQL: say so at the end,
// with the command that runs them, instead of leaving a bare "skipped" count.
import type { Reporter, TestModule } from 'vitest/node';
import { testMode } from './mode.js';

export default class SkippedReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (testMode() === 'pg') return;
    const skipped = modules.reduce((n, m) => n + [...m.children.allTests('skipped')].length, 0);
    if (skipped > 0) {
      process.stdout.write(
        `\n${skipped} test(s) skipped on PGlite: the concurrency, restart, Lambda, workerd and previous-release tests need a real PostgreSQL; run them with npm run test:pg\n`,
      );
    }
  }
}
