import type { RedisClient } from '@smsgw/queue';

/**
 * Requests in flight to one endpoint, across every dispatcher, and the deliveries waiting for one.
 * Per endpoint, Redis holds the slots (a sorted set of tokens scored by when they were last
 * renewed; a dead dispatcher's slot lapses after `leaseMs`), what each slot is delivering (a hash
 * token -> delivery id) and the parked deliveries (a sorted set of delivery ids scored by when
 * they were parked). A delivery that finds every slot taken is parked instead of polling; whoever
 * holds a slot takes the parked ones in order before giving the slot back. Each step is a single
 * script, so a delivery is never parked just after the last holder looked. When a slot lapses,
 * the delivery it had in hand is parked again, first in line. Endpoints with parked deliveries
 * are listed in one set, so that the sweep can wake those whose holders died (`wakeOrphans`).
 *
 * KEYS: 1 slots, 2 parked, 3 endpoints with parked deliveries, 4 deliveries in hand.
 */
const LAPSE = `
-- An endpoint stays listed (KEYS[3]) while a delivery is parked or in a slot's hands: a holder that
-- dies with a parked delivery it took must leave it to the sweep, whoever else comes or not.
local function forget_if_idle(endpoint)
  if redis.call('ZCARD', KEYS[2]) == 0 and redis.call('HLEN', KEYS[4]) == 0 then redis.call('SREM', KEYS[3], endpoint) end
end
local function lapse(now, lease, endpoint)
  local before = now - lease
  local lapsed = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', before)
  for _, token in ipairs(lapsed) do
    local id = redis.call('HGET', KEYS[4], token)
    if id then
      redis.call('ZADD', KEYS[2], 'NX', 0, id)
      redis.call('SADD', KEYS[3], endpoint)
      redis.call('HDEL', KEYS[4], token)
    end
  end
  if #lapsed > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', before) end
end
`;

// ARGV: now, leaseMs, limit, token, deliveryId, keepMs, endpoint. 1: the slot is taken; 0: parked.
const ACQUIRE = `${LAPSE}
lapse(tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[7])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('HSET', KEYS[4], ARGV[4], ARGV[5])
  redis.call('PEXPIRE', KEYS[4], ARGV[6])
  return 1
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('SADD', KEYS[3], ARGV[7])
return 0`;

// ARGV: now, leaseMs, token, giveUp (1/0), endpoint. Takes the oldest parked delivery and renews
// the slot, or, with none parked (or giving up), gives the slot back; returns the delivery taken.
const NEXT = `${LAPSE}
local next = redis.call('ZPOPMIN', KEYS[2])
if ARGV[4] == '1' or next[1] == nil then
  redis.call('ZREM', KEYS[1], ARGV[3])
  redis.call('HDEL', KEYS[4], ARGV[3])
else
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
  redis.call('HSET', KEYS[4], ARGV[3], next[1])
end
forget_if_idle(ARGV[5])
return next[1]`;

// ARGV: now, leaseMs, endpoint. For an endpoint with parked deliveries and no live slot (its
// holders died): takes the oldest parked delivery, for a job that will take a slot and serve the
// rest. Forgets an endpoint with nothing parked and nothing in hand.
const WAKE = `${LAPSE}
lapse(tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
if redis.call('ZCARD', KEYS[2]) == 0 then
  forget_if_idle(ARGV[3])
  return false
end
if redis.call('ZCARD', KEYS[1]) > 0 then return false end
local next = redis.call('ZPOPMIN', KEYS[2])
forget_if_idle(ARGV[3])
return next[1]`;

// The keys of an endpoint that sees no deliveries for this long go (a lapsed slot must stay
// readable after its lease, for what it had in hand to be parked again).
const PARKED_TTL_MS = 7 * 24 * 3600 * 1000;

export class EndpointSlots {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly leaseMs: number,
  ) {}

  private keys(webhookId: string): [string, string, string, string] {
    return [
      `${this.prefix}:webhook-slots:${webhookId}`,
      `${this.prefix}:webhook-parked:${webhookId}`,
      `${this.prefix}:webhook-parked-endpoints`,
      `${this.prefix}:webhook-in-hand:${webhookId}`,
    ];
  }

  /** Takes a slot for `deliveryId`, or parks it (false) when the endpoint has all its slots taken. */
  async acquire(webhookId: string, token: string, deliveryId: string): Promise<boolean> {
    const taken = await this.redis.eval(ACQUIRE, 4, ...this.keys(webhookId), Date.now(), this.leaseMs, this.limit, token, deliveryId, PARKED_TTL_MS, webhookId);
    return taken === 1;
  }

  /**
   * The next parked delivery for the holder of `token`, which keeps its slot; or undefined, and the
   * slot is given back. With `giveUp` the slot is given back whatever is parked, and the delivery
   * taken (if any) is the caller's to enqueue.
   */
  async next(webhookId: string, token: string, giveUp = false): Promise<string | undefined> {
    const id = await this.redis.eval(NEXT, 4, ...this.keys(webhookId), Date.now(), this.leaseMs, token, giveUp ? '1' : '0', webhookId);
    return typeof id === 'string' ? id : undefined;
  }

  /**
   * For each endpoint whose deliveries are parked but whose slots all lapsed (the dispatchers that
   * held them died), the oldest parked delivery, to enqueue: its job takes a slot and serves the rest.
   */
  async wakeOrphans(): Promise<{ id: string; webhookId: string }[]> {
    const endpoints = await this.redis.smembers(`${this.prefix}:webhook-parked-endpoints`);
    const woken: { id: string; webhookId: string }[] = [];
    for (const webhookId of endpoints) {
      const id = await this.redis.eval(WAKE, 4, ...this.keys(webhookId), Date.now(), this.leaseMs, webhookId);
      if (typeof id === 'string') woken.push({ id, webhookId });
    }
    return woken;
  }
}
