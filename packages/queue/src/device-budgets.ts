import type { Redis } from 'ioredis';

/**
 * Carrier budgets' counters (issue 18, item 4; docs/devices.md, "Carrier budgets"), shared by every
 * dispatcher in Redis and taken by one script, so two dispatchers never both take the last room.
 * A scope is a device as a whole (SIM 0) or one of its SIMs. Per scope: `:h` the parts handed out
 * per minute (the rolling hour), `:m:<month>` the month's parts, each day's parts and the
 * generation of the limits counted, `:r:<month>` the month's recipients with how many messages
 * each (so a known recipient costs nothing and a release can give one back). Windows follow Redis's
 * clock; the month is the UTC calendar month. Postgres is the record: a scope whose month key is
 * missing (Redis wiped) or counted under other limits is seeded again from the messages.
 */
/** A scope's limits (packages/core's Budgets); null: none. */
export interface BudgetLimits {
  segmentsPerHour: number | null;
  segmentsPerDay: number | null;
  segmentsPerMonth: number | null;
  uniqueRecipientsPerMonth: number | null;
}

export interface BudgetScope {
  deviceId: string;
  /** 0: the device as a whole. */
  sim: number;
  /** The generation of the device's limits (devices.budgets_changed_at); another one is counted again. */
  generation: string;
  limits: BudgetLimits;
}

export interface BudgetItem {
  segments: number;
  to: string;
}

export type BudgetTake =
  | { taken: boolean[]; retryInMs: number; at: number }
  | { seed: BudgetScope; at: number };

/** What Postgres says a scope used, for a seed: per minute in the rolling hour, the day, the month and its recipients. */
export interface BudgetSeed {
  minutes: [minute: number, segments: number][];
  day: number;
  month: number;
  recipients: [to: string, messages: number][];
}

// Month of a day number (days since 1970-01-01, UTC), H. Hinnant's civil calendar: returns the month's
// index (year * 12 + month - 1), its first and its next month's first instant in ms.
const MONTH = `
local function civil(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m
end
local function daysFrom(y, m)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doy = math.floor((153 * mp + 2) / 5)
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end
local function month(now)
  local y, m = civil(math.floor(now / 86400000))
  local ny, nm = y, m + 1
  if nm > 12 then ny, nm = y + 1, 1 end
  return y * 12 + m - 1, daysFrom(y, m) * 86400000, daysFrom(ny, nm) * 86400000
end
local KEEP_MONTH = 32 * 86400000
`;

// KEYS: the scopes' bases. ARGV: 5 per scope (generation, hour, day, month, unique limits; -1: none),
// then (segments, recipient) per message. Returns {-1, now, scope} when a scope must be seeded first,
// else {retryMs, now, taken flags...}.
const TAKE = `${MONTH}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local minute = math.floor(now / 60000)
local day = math.floor(now / 86400000)
local mi, mstart, mend = month(now)
local S = {}
for i = 1, #KEYS do
  local b, o = KEYS[i], (i - 1) * 5
  local s = { h = b .. ':h', m = b .. ':m:' .. mi, r = b .. ':r:' .. mi, gen = ARGV[o + 1],
    lh = tonumber(ARGV[o + 2]), ld = tonumber(ARGV[o + 3]), lm = tonumber(ARGV[o + 4]), lu = tonumber(ARGV[o + 5]) }
  if redis.call('HGET', s.m, 'gen') ~= s.gen then
    -- A new month of a scope counted without a break (last month's key, same limits) starts at zero.
    if redis.call('EXISTS', s.m) == 0 and redis.call('HGET', b .. ':m:' .. (mi - 1), 'gen') == s.gen then
      redis.call('HSET', s.m, 'gen', s.gen, 'seg', 0)
      redis.call('PEXPIREAT', s.m, mend + KEEP_MONTH)
    else
      return {-1, now, i}
    end
  end
  s.hour, s.buckets = 0, {}
  local hb = redis.call('HGETALL', s.h)
  for j = 1, #hb, 2 do
    local at, v = tonumber(hb[j]), tonumber(hb[j + 1])
    if at <= minute - 60 then redis.call('HDEL', s.h, hb[j]) else
      s.hour = s.hour + v
      s.buckets[#s.buckets + 1] = { at, v }
    end
  end
  table.sort(s.buckets, function(a, c) return a[1] < c[1] end)
  s.day = tonumber(redis.call('HGET', s.m, 'd:' .. day) or '0')
  s.month = tonumber(redis.call('HGET', s.m, 'seg') or '0')
  s.uniq = redis.call('HLEN', s.r)
  S[i] = s
end
-- How long until scope s has room for segs parts to a new (or known) recipient; 0: it has room now.
local function wait(s, segs, known)
  local w = 0
  if s.lh >= 0 and s.hour + segs > s.lh then
    local freed, frees = 0, 3600000
    for _, bucket in ipairs(s.buckets) do
      freed = freed + bucket[2]
      if s.hour - freed + segs <= s.lh then frees = (bucket[1] + 60) * 60000 - now break end
    end
    w = math.max(w, frees)
  end
  if s.ld >= 0 and s.day + segs > s.ld then w = math.max(w, (day + 1) * 86400000 - now) end
  if s.lm >= 0 and s.month + segs > s.lm then w = math.max(w, mend - now) end
  if s.lu >= 0 and not known(s) and s.uniq + 1 > s.lu then w = math.max(w, mend - now) end
  return w
end
local out, retry = { 0, now }, -1
for k = #KEYS * 5 + 1, #ARGV, 2 do
  local segs, to = tonumber(ARGV[k]), ARGV[k + 1]
  local known = function(s) return redis.call('HEXISTS', s.r, to) == 1 end
  local w = 0
  for _, s in ipairs(S) do w = math.max(w, wait(s, segs, known)) end
  if w == 0 then
    for _, s in ipairs(S) do
      redis.call('HINCRBY', s.h, minute, segs)
      s.hour = s.hour + segs
      if #s.buckets > 0 and s.buckets[#s.buckets][1] == minute then s.buckets[#s.buckets][2] = s.buckets[#s.buckets][2] + segs
      else s.buckets[#s.buckets + 1] = { minute, segs } end
      s.day = redis.call('HINCRBY', s.m, 'd:' .. day, segs)
      s.month = redis.call('HINCRBY', s.m, 'seg', segs)
      if redis.call('HINCRBY', s.r, to, 1) == 1 then s.uniq = s.uniq + 1 end
      redis.call('PEXPIRE', s.h, 3660000)
      redis.call('PEXPIREAT', s.r, mend + 86400000)
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
    if retry < 0 or w < retry then retry = w end
  end
end
if retry > 0 then out[1] = retry end
return out`;

// KEYS[1]: the scope's base. ARGV: generation, the take's time, n minutes, n (minute, segments),
// the day's and the month's parts, then (recipient, messages) pairs. A scope seeded meanwhile is left.
const SEED = `${MONTH}
local b, gen, now = KEYS[1], ARGV[1], tonumber(ARGV[2])
local mi, mstart, mend = month(now)
local m, h, r = b .. ':m:' .. mi, b .. ':h', b .. ':r:' .. mi
if redis.call('HGET', m, 'gen') == gen then return 0 end
redis.call('DEL', m, h, r)
local n = tonumber(ARGV[3])
for i = 0, n - 1 do redis.call('HSET', h, ARGV[4 + 2 * i], ARGV[5 + 2 * i]) end
local k = 4 + 2 * n
redis.call('HSET', m, 'gen', gen, 'd:' .. math.floor(now / 86400000), ARGV[k], 'seg', ARGV[k + 1])
for i = k + 2, #ARGV, 2 do redis.call('HSET', r, ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIREAT', m, mend + KEEP_MONTH)
redis.call('PEXPIREAT', r, mend + 86400000)
if n > 0 then redis.call('PEXPIRE', h, 3660000) end
return 1`;

// KEYS: the scopes' bases. ARGV: the take's time, then (segments, recipient) per message given back.
const RELEASE = `${MONTH}
local now = tonumber(ARGV[1])
local minute, day = math.floor(now / 60000), math.floor(now / 86400000)
local mi = month(now)
for _, b in ipairs(KEYS) do
  local m, h, r = b .. ':m:' .. mi, b .. ':h', b .. ':r:' .. mi
  if redis.call('EXISTS', m) == 1 then
    for k = 2, #ARGV, 2 do
      local segs, to = tonumber(ARGV[k]), ARGV[k + 1]
      -- Never below 0 (a seed in between counted without the room given back).
      local function back(key, field)
        if redis.call('HINCRBY', key, field, -segs) < 0 then redis.call('HSET', key, field, 0) end
      end
      if redis.call('HEXISTS', h, minute) == 1 then back(h, minute) end
      back(m, 'd:' .. day)
      back(m, 'seg')
      if redis.call('HINCRBY', r, to, -1) <= 0 then redis.call('HDEL', r, to) end
    end
  end
end
return 0`;

const limit = (value: number | null) => (value === null ? -1 : value);

export class DeviceBudgets {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(scope: { deviceId: string; sim: number }): string {
    return `${this.prefix}:budget:${scope.deviceId}:${scope.sim}`;
  }

  /**
   * Takes room for each item (in order) that fits every scope now, skipping those that do not (a
   * message to a known recipient may still fit when a new one does not); `retryInMs` is when the
   * soonest skipped one could fit. Or asks for a scope to be seeded from Postgres first.
   */
  async take(scopes: BudgetScope[], items: BudgetItem[]): Promise<BudgetTake> {
    if (items.length === 0) return { taken: [], retryInMs: 0, at: Date.now() };
    const args = [
      ...scopes.flatMap((s) => [s.generation, limit(s.limits.segmentsPerHour), limit(s.limits.segmentsPerDay), limit(s.limits.segmentsPerMonth), limit(s.limits.uniqueRecipientsPerMonth)]),
      ...items.flatMap((i) => [i.segments, i.to]),
    ];
    const reply = (await this.redis.eval(TAKE, scopes.length, ...scopes.map((s) => this.key(s)), ...args)) as number[];
    const [first, at] = [reply[0]!, reply[1]!];
    if (first === -1) return { seed: scopes[reply[2]! - 1]!, at };
    return { taken: reply.slice(2).map((f) => f === 1), retryInMs: first, at };
  }

  /** Sets a scope's counts from Postgres (as of `at`, the take's time), unless it was seeded meanwhile. */
  async seed(scope: BudgetScope, at: number, counts: BudgetSeed): Promise<void> {
    const args = [
      scope.generation, at, counts.minutes.length, ...counts.minutes.flat(), counts.day, counts.month, ...counts.recipients.flat(),
    ];
    await this.redis.eval(SEED, 1, this.key(scope), ...args);
  }

  /** Gives back the room taken at `at` for items that were not handed after all (another dispatcher assigned them first). */
  async release(scopes: { deviceId: string; sim: number }[], at: number, items: BudgetItem[]): Promise<void> {
    if (items.length === 0 || scopes.length === 0) return;
    await this.redis.eval(RELEASE, scopes.length, ...scopes.map((s) => this.key(s)), at, ...items.flatMap((i) => [i.segments, i.to]));
  }
}
