-- Carrier budgets, read only (the routing snapshot): a scope's counts as budget-take.lua sees them.
-- KEYS[1]: the scope's base. ARGV: generation, then recipients. Returns {-1, now} when the scope must
-- be seeded first, else {now, day, month, recipients, n minutes, n (minute, parts), known flags...}.
-- @include budget-month
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local minute = math.floor(now / 60000)
local day = math.floor(now / 86400000)
local mi = month(now)
local b = KEYS[1]
local m, r = b .. ':m:' .. mi, b .. ':r:' .. mi
-- A new month of a scope counted without a break (no key yet, last month's of the same limits)
-- starts at zero, as budget-take.lua starts it.
if redis.call('HGET', m, 'gen') ~= ARGV[1]
  and not (redis.call('EXISTS', m) == 0 and redis.call('HGET', b .. ':m:' .. (mi - 1), 'gen') == ARGV[1]) then
  return {-1, now}
end
local out = { now, tonumber(redis.call('HGET', m, 'd:' .. day) or '0'), tonumber(redis.call('HGET', m, 'seg') or '0'), redis.call('HLEN', r) }
local buckets = {}
local hb = redis.call('HGETALL', b .. ':h')
for j = 1, #hb, 2 do
  local at = tonumber(hb[j])
  if at > minute - 60 then buckets[#buckets + 1] = { at, tonumber(hb[j + 1]) } end
end
table.sort(buckets, function(a, c) return a[1] < c[1] end)
out[#out + 1] = #buckets
for _, bucket in ipairs(buckets) do
  out[#out + 1] = bucket[1]
  out[#out + 1] = bucket[2]
end
for k = 2, #ARGV do out[#out + 1] = redis.call('HEXISTS', r, ARGV[k]) end
return out
