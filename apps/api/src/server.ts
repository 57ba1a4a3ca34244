import { ApiConfigSchema, loadConfig } from '@smsgw/config';
import { buildApp } from './app.ts';

// `pnpm start:api`: the API alone, configured by the environment.
const config = loadConfig(ApiConfigSchema);
const app = await buildApp({ config });
await app.listen({ host: config.HOST, port: config.PORT });

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.log.info({ signal }, 'shutting down');
    // close() stops accepting connections, lets requests in flight finish, then closes Redis and Postgres.
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
