-- Month of a day number (days since 1970-01-01, UTC), H. Hinnant's civil calendar: returns the month's
-- index (year * 12 + month - 1), its first and its next month's first instant in ms.
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
