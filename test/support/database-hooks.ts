// A root hook (loaded by .mocharc.json for every test process, each mocha --parallel worker included):
// before a file's suites run, the process's embedded PostgreSQL is started, with a time budget of its
// own. Started from a suite's "before all" hook instead, a slow start (initdb on a loaded machine)
// counted against that hook's 20 s. A failure is left to the suites: each createTestDatabase() then
// fails at once with the reason (support/database.ts), and files that need no database pass.
import { databaseReady } from './database.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    // initdb (60 s at most) and the server's first connection (30 s at most): runProgram and startServer.
    this.timeout(120_000);
    await databaseReady().catch(() => {});
  },
};
