-- Per-device pacing: hands a device what fits its windows now (packages/queue, DevicePacing.take).
-- KEYS[1]: the device's log. ARGV: keepMs, n windows, then n (windowMs, limit) pairs, then message ids.
-- @include pace-room
local keep = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local room = roomIn(n, 3)
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
return {taken, retry}
