import type { Redis } from 'ioredis';

/**
 * Per-device pacing (issue 16): a device is handed at most `limit` messages in any window of
 * `windowMs`, for each of its windows (a minute, an hour, a day), across every dispatcher. Redis
 * keeps, per device, a sorted set of the messages handed to it scored by when (Redis's own clock,
 * so dispatchers' clocks do not matter); taking is one script, so two dispatchers never both take
 * the last place. A sliding log: at each hand-out at most `limit` others were handed in the
 * window before it, hence in any window.
 */
export interface PaceWindow {
  windowMs: number;
  limit: number;
}

export interface PaceTake {
  /** How many of the offered messages (the first ones) the device may be handed now. */
  taken: number;
  /** When nothing more fits: milliseconds until a place frees up; 0 when there is room. */
  retryInMs: number;
}

// KEYS[1]: the device's log. ARGV: keepMs, n windows, then n (windowMs, limit) pairs, then message ids.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keep = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local function used(window) return redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf') end
local room = -1
for w = 0, n - 1 do
  local free = tonumber(ARGV[4 + 2 * w]) - used(tonumber(ARGV[3 + 2 * w]))
  if free < 0 then free = 0 end
  if room < 0 or free < room then room = free end
end
local first = 3 + 2 * n
local taken = 0
for i = first, #ARGV do
  if taken >= room then break end
  redis.call('ZADD', KEYS[1], now, ARGV[i])
  taken = taken + 1
end
if taken > 0 then redis.call('PEXPIRE', KEYS[1], keep) end
local retry = 0
if taken < #ARGV - first + 1 then
  -- For each full window, the hand-out that must leave it for a place to free: it leaves at its score + window.
  for w = 0, n - 1 do
    local window = tonumber(ARGV[3 + 2 * w])
    local limit = tonumber(ARGV[4 + 2 * w])
    local count = used(window)
    if count >= limit then
      local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', count - limit, 1)
      local frees = tonumber(oldest[2]) + window - now
      if frees > retry then retry = frees end
    end
  end
end
return {taken, retry}`;

export class DevicePacing {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(deviceId: string): string {
    return `${this.prefix}:pace:${deviceId}`;
  }

  /**
   * Hands the device as many of `messageIds` (in order) as its windows allow now, recording them;
   * the rest must wait `retryInMs` or go to another device.
   */
  async take(deviceId: string, windows: PaceWindow[], messageIds: string[]): Promise<PaceTake> {
    if (windows.length === 0) return { taken: messageIds.length, retryInMs: 0 };
    if (messageIds.length === 0) return { taken: 0, retryInMs: 0 };
    const keep = Math.max(...windows.map((w) => w.windowMs));
    const args = [keep, windows.length, ...windows.flatMap((w) => [w.windowMs, w.limit]), ...messageIds];
    const [taken, retry] = (await this.redis.eval(TAKE, 1, this.key(deviceId), ...args)) as [number, number];
    return { taken, retryInMs: taken === messageIds.length ? 0 : retry };
  }

  /** Gives back the places of messages that were not handed after all (another dispatcher assigned them first). */
  async release(deviceId: string, messageIds: string[]): Promise<void> {
    if (messageIds.length > 0) await this.redis.zrem(this.key(deviceId), ...messageIds);
  }
}
