import { pino } from 'pino';
import { DispatcherConfigSchema, exitOnStartupError, limitHeapGrowth, loadConfigOrExit, logStream } from '@smsgw/config';
import { databaseProblem } from '@smsgw/db/sql';
import { redisProblem } from '@smsgw/queue';
import { startDispatcher } from './dispatcher.ts';

// `pnpm start:dispatcher`: one dispatcher process, configured by the environment.
// Every start-up error is one line naming the variable and the fix, and exit 1 (never a stack).
const config = loadConfigOrExit(DispatcherConfigSchema);
limitHeapGrowth(config.HEAP_GROWTH_PERCENT);
// One line and exit 1 for a database that is missing, unreachable or not migrated, or a Redis that does not answer.
const problem = (await databaseProblem(config.DATABASE_URL)) ?? (await redisProblem(config));
if (problem) {
  console.error(problem);
  process.exit(1);
}
const log = pino({ level: config.LOG_LEVEL, base: { service: 'dispatcher', pid: process.pid } }, logStream(config.LOG_FORMAT));
const dispatcher = await startDispatcher(config, log).catch(exitOnStartupError);

// Once, however many signals arrive (Ctrl-C of `./pnpmw start` reaches the whole process group).
let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    dispatcher.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
