-- Carrier budgets: gives back room (DeviceBudgets.release).
-- KEYS: the scopes' bases. ARGV: the take's time, then (segments, recipient) per message given back.
-- @include budget-month
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
return 0
