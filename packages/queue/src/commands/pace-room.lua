-- A device's pacing log (KEYS[1]) at `now`: how many hand-outs each window holds, and the room left
-- in all of them, the n (windowMs, limit) pairs starting at ARGV[first].
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function used(window) return redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf') end
local function roomIn(n, first)
  local room = -1
  for w = 0, n - 1 do
    local free = tonumber(ARGV[first + 1 + 2 * w]) - used(tonumber(ARGV[first + 2 * w]))
    if free < 0 then free = 0 end
    if room < 0 or free < room then room = free end
  end
  return room
end
