import type { Redis } from 'ioredis';

/**
 * Requests in flight to one endpoint, across every dispatcher, and the deliveries waiting for one.
 * Per endpoint, Redis holds the slots (a sorted set of tokens scored by when they were last
 * renewed; a dead dispatcher's slot lapses after `leaseMs`) and the parked deliveries (a sorted set
 * of delivery ids scored by when they were parked). A delivery that finds every slot taken is
 * parked instead of polling; whoever holds a slot takes the parked ones in order before giving the
 * slot back. Both steps are single scripts, so a delivery is never parked just after the last
 * holder looked.
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[5])
  return 1
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 0`;

// Takes the oldest parked delivery and renews the slot, or, with none parked (or ARGV[4] = 1,
// giving up the slot), gives the slot back; returns the delivery id taken, if any.
const NEXT = `
local next = redis.call('ZPOPMIN', KEYS[2])
if ARGV[4] == '1' or next[1] == nil then
  redis.call('ZREM', KEYS[1], ARGV[3])
else
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return next[1]`;

// Parked deliveries of an endpoint nobody serves any more are found by the outbox sweep long before this.
const PARKED_TTL_MS = 7 * 24 * 3600 * 1000;

export class EndpointSlots {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly leaseMs: number,
  ) {}

  private keys(webhookId: string): [string, string] {
    return [`${this.prefix}:webhook-slots:${webhookId}`, `${this.prefix}:webhook-parked:${webhookId}`];
  }

  /** Takes a slot for `deliveryId`, or parks it (false) when the endpoint has all its slots taken. */
  async acquire(webhookId: string, token: string, deliveryId: string): Promise<boolean> {
    const taken = await this.redis.eval(ACQUIRE, 2, ...this.keys(webhookId), Date.now(), this.leaseMs, this.limit, token, deliveryId, PARKED_TTL_MS);
    return taken === 1;
  }

  /**
   * The next parked delivery for the holder of `token`, which keeps its slot; or undefined, and the
   * slot is given back. With `giveUp` the slot is given back whatever is parked, and the delivery
   * taken (if any) is the caller's to enqueue.
   */
  async next(webhookId: string, token: string, giveUp = false): Promise<string | undefined> {
    const id = await this.redis.eval(NEXT, 2, ...this.keys(webhookId), Date.now(), this.leaseMs, token, giveUp ? '1' : '0');
    return typeof id === 'string' ? id : undefined;
  }
}
