-- Carrier budgets: sets a scope's counts from Postgres (DeviceBudgets.seed).
-- KEYS[1]: the scope's base. ARGV: generation, the take's time, n minutes, n (minute, segments),
-- the day's and the month's parts, then (recipient, messages) pairs. A scope seeded meanwhile is left.
-- @include budget-month
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
return 1
