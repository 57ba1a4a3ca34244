-- Carrier budgets: takes room for each message that fits every scope now (DeviceBudgets.take).
-- KEYS: the scopes' bases. ARGV: 5 per scope (generation, hour, day, month, unique limits; -1: none),
-- then (segments, recipient) per message. Returns {-1, now, scope} when a scope must be seeded first,
-- else {retryMs, now, taken flags...}.
-- @include budget-month
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
return out
