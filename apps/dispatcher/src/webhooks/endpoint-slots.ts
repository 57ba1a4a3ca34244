import type { Redis } from 'ioredis';

/**
 * Requests in flight to one endpoint, across every dispatcher: a sorted set of slot tokens per
 * endpoint in Redis, scored by when they were taken. A slot of a dispatcher that died lapses
 * after `leaseMs`. This keeps one slow endpoint from taking every delivery worker.
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

export class EndpointSlots {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly leaseMs: number,
  ) {}

  private key(webhookId: string): string {
    return `${this.prefix}:webhook-slots:${webhookId}`;
  }

  async acquire(webhookId: string, token: string): Promise<boolean> {
    const taken = await this.redis.eval(ACQUIRE, 1, this.key(webhookId), Date.now(), this.leaseMs, this.limit, token);
    return taken === 1;
  }

  async release(webhookId: string, token: string): Promise<void> {
    await this.redis.zrem(this.key(webhookId), token);
  }
}
