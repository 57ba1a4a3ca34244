import { ApiConfigSchema, exitOnStartupError, limitHeapGrowth, listening, loadConfigOrExit, logStream } from '@smsgw/config';
import { sessionsDatabaseProblem } from '@smsgw/db';
import { redisProblem } from '@smsgw/queue';
import { buildApp } from './app.ts';

// `pnpm start:api`: the API alone, configured by the environment.
// Every start-up error is one line naming the variable and the fix, and exit 1 (never a stack).
const config = loadConfigOrExit(ApiConfigSchema);
limitHeapGrowth(config.HEAP_GROWTH_PERCENT);
// One line and exit 1 for a database that is missing, unreachable or not migrated, a pooler where
// the API needs sessions (DATABASE_DIRECT_URL unset), or a Redis that does not answer, before listening.
const problem =
  (await sessionsDatabaseProblem(config, 'the API (its LISTEN for credential changes, the settings of its listings)')) ?? (await redisProblem(config));
if (problem) {
  console.error(problem);
  process.exit(1);
}
const stream = logStream(config.LOG_FORMAT);
const app = await buildApp({ config, ...(stream && { logger: { stream } }) });
await listening(() => app.listen({ host: config.HOST, port: config.PORT }), {
  host: config.HOST,
  port: config.PORT,
  hostVariable: 'HOST',
  portVariable: 'PORT',
}).catch(exitOnStartupError);

const SHUTDOWN_DEADLINE_MS = 4000;

// Once, however many signals arrive (Ctrl-C sends SIGINT to `./pnpmw start` and its children alike).
let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // Requests still running after this are cut off, so that the API exits within about 5 s.
    setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_DEADLINE_MS).unref();
    // close() stops accepting connections, ends long polls and event streams, lets the requests in
    // flight finish, then closes Redis and Postgres.
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
