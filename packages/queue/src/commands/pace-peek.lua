-- Per-device pacing, read only (the routing snapshot): the room the device's windows have now, and
-- in how many ms a place frees once that room is taken (what pace-take.lua would answer then).
-- KEYS[1]: the device's log. ARGV: n windows, then n (windowMs, limit) pairs.
-- @include pace-room
local n = tonumber(ARGV[1])
local room = roomIn(n, 2)
local retry = 0
for w = 0, n - 1 do
  local window = tonumber(ARGV[2 + 2 * w])
  local limit = tonumber(ARGV[3 + 2 * w])
  local count = used(window)
  if count + room >= limit then
    -- The hand-out that must leave the window for a place to free: an old one, or one taken now.
    local index = count + room - limit
    local frees = window
    if index < count then
      local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', index, 1)
      frees = tonumber(oldest[2]) + window - now
    end
    if frees > retry then retry = frees end
  end
end
return {room, retry}
