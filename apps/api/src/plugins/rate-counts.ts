import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { RedisClient } from '@smsgw/queue';

// As @fastify/rate-limit's own store counts (a window from the first request), by `n` at once:
// the count and the milliseconds left of the window.
const COUNT = `
local n = tonumber(ARGV[1])
local count = redis.call('INCRBY', KEYS[1], n)
if count == n then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {count, tonumber(ARGV[2])}
end
return {count, redis.call('PTTL', KEYS[1])}`;

type CountingRedis = RedisClient & {
  countRequests(key: string, n: number, windowMs: number): Promise<[number, number]>;
};

/** What this process knows of a budget: Redis's last count, its own requests not yet in it, the window's end. */
interface View {
  counted: number;
  pending: number;
  sending: number;
  resetAt: number;
}

/** A deferred count reaches Redis within this, with the next send's round trip or on its own. */
const FLUSH_MS = 50;
/** Near a window's end every request is counted before it is answered, so that none is counted in the next window. */
const WINDOW_END_MARGIN_MS = 1000;

/**
 * The rate limit's counters (docs/decisions.md, "The rate limit rides the send's round trip"), the
 * store of @fastify/rate-limit. A request is counted in Redis before it is answered (one round trip,
 * as the library's own store does) unless this process already knows the budget's count and its
 * request keeps the count at or below half the limit, away from the window's end: then the request
 * goes on at once and its count is sent later, with the Redis round trip of the next send
 * (`flush`, called beside the enqueue) or within FLUSH_MS, several requests in one command. Each
 * answer of Redis brings the count of every process. In one process the decisions are exactly
 * those of counting first; across processes a request is refused from the same count as long as
 * the others spend less than half the budget between two counts of this one. Past half, and for
 * every refusal, the count comes first. If Redis cannot count, requests go on (`skipOnError`) and
 * the deferred counts are dropped, as the library's store would skip them.
 */
export class RateCounts implements FastifyRateLimitStore {
  private readonly views = new Map<string, View>();
  // The budgets with counts not yet sent.
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  // Past this many budgets, those whose window ended are forgotten.
  private pruneAt = 1024;

  constructor(
    private readonly options: { redis: RedisClient; namespace: string; windowMs: number; onFlushError: (error: unknown) => void; now?: () => number },
  ) {
    define(options.redis);
  }

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, _timeWindow: number, max: number): void {
    const now = this.now();
    const view = this.views.get(key);
    const known = view ? view.counted + view.pending + view.sending : 0;
    if (view && now < view.resetAt - WINDOW_END_MARGIN_MS && 2 * (known + 1) <= max) {
      view.pending++;
      this.due.add(key);
      this.timer ??= setTimeout(() => this.flush(this.options.redis), FLUSH_MS).unref();
      return callback(null, { current: known + 1, ttl: view.resetAt - now });
    }
    // Counted now, with whatever of this budget waited to be sent.
    this.send(this.options.redis, key, 1).then(
      ([count, ttl]) => callback(null, { current: count, ttl }),
      (error: Error) => callback(error),
    );
  }

  child(): FastifyRateLimitStore {
    return this;
  }

  /** Sends every deferred count now, on `redis` (a send passes its enqueue's connection: one round trip for both). */
  flush(redis: RedisClient): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const key of this.due) this.send(redis, key, 0).catch(() => undefined);
  }

  /** Counts `own` requests of this call and the deferred ones of `key`; updates what this process knows. */
  private async send(redis: RedisClient, key: string, own: number): Promise<[number, number]> {
    const view = this.views.get(key);
    const deferred = view?.pending ?? 0;
    const n = own + deferred;
    this.due.delete(key);
    if (view) {
      view.sending += deferred;
      view.pending = 0;
    }
    const started = this.now();
    try {
      define(redis);
      const [count, ttl] = await (redis as CountingRedis).countRequests(this.options.namespace + key, n, this.options.windowMs);
      let target = this.views.get(key);
      if (view && target === view) view.sending -= deferred;
      if (!target) this.views.set(key, (target = { counted: 0, pending: 0, sending: 0, resetAt: 0 }));
      // A new window in Redis (count === n), or the same one: Redis's count is everyone's.
      target.counted = count === n ? count : Math.max(target.counted, count);
      target.resetAt = started + ttl;
      if (this.views.size > this.pruneAt) this.prune();
      return [count, ttl];
    } catch (error) {
      if (this.views.get(key) === view) this.views.delete(key);
      if (own === 0) this.options.onFlushError(error);
      throw error;
    }
  }

  private prune(): void {
    const now = this.now();
    for (const [key, view] of this.views) if (view.resetAt <= now && view.pending === 0 && view.sending === 0) this.views.delete(key);
    this.pruneAt = Math.max(1024, 2 * this.views.size);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}

function define(redis: RedisClient): void {
  if (!('countRequests' in redis)) redis.defineCommand('countRequests', { numberOfKeys: 1, lua: COUNT });
}
