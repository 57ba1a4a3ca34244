import type { DelayLink } from './delay-link.ts';

const SENDS = 20;

/**
 * The round trips one API process makes to Postgres and to Redis per send (`send(i)` for i = 1…SENDS, one after
 * another, `SENDS` of them), less what the process makes on its own (keepalives, timers) over as
 * long a quiet time after them; rounded up to a tenth.
 */
export async function sendRoundTrips(
  links: { postgres: DelayLink; redis: DelayLink },
  send: (i: number) => Promise<void>,
): Promise<{ postgres: number; redis: number }> {
  const read = () => ({ postgres: links.postgres.roundTrips, redis: links.redis.roundTrips });
  // The first send of a process warms its caches (the key's credential, the user's limits).
  await send(0);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const start = read();
  const startedAt = performance.now();
  for (let i = 1; i <= SENDS; i++) await send(i);
  const took = performance.now() - startedAt;
  const sent = read();
  await new Promise((resolve) => setTimeout(resolve, took));
  const idle = read();
  const per = (store: 'postgres' | 'redis') => Math.ceil((10 * (sent[store] - start[store] - (idle[store] - sent[store]))) / SENDS) / 10;
  return { postgres: per('postgres'), redis: per('redis') };
}
