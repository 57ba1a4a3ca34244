import type { FastifyInstance } from 'fastify';

/** The stores an API process needs: Postgres (the record) and Redis (the work list). */
export const STORES = ['postgres', 'redis'] as const;
export type Store = (typeof STORES)[number];

// A store that has not answered within this time counts as down (`/ready`, `smsgw_store_up`).
export const CHECK_TIMEOUT_MS = 1000;

/** `promise`, or a rejection once `ms` have passed without its answer. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether each store answers a trivial command within CHECK_TIMEOUT_MS: the one check behind
 * `/ready` and the `smsgw_store_up` metric. `onFailure` hears why a store counts as down.
 */
export async function checkStores(app: FastifyInstance, onFailure: (store: Store, error: Error) => void): Promise<Record<Store, boolean>> {
  const answers = (store: Store, command: () => Promise<unknown>) =>
    within(command(), CHECK_TIMEOUT_MS).then(
      () => true,
      (error: Error) => {
        onFailure(store, error);
        return false;
      },
    );
  const [postgres, redis] = await Promise.all([answers('postgres', () => app.sql.query('SELECT 1')), answers('redis', () => app.redis.ping())]);
  return { postgres, redis };
}
