-- Shared helpers, inlined into every flight script by scripts/gen-lua.mjs (`--@include common`).
-- Numbers are formatted with '%.0f': tostring() would print 1.7e+15 and lose the epoch's digits.
local FLIGHT_SCRIPT_VERSION = '@flight/redis-scripts/4'

local function fmt(n)
  return string.format('%.0f', n)
end

-- Fails the script before any write with a code mapped to a typed error on the Node side.
local function bad_input(what)
  return redis.error_reply('E_FLIGHT_VALIDATION ' .. FLIGHT_SCRIPT_VERSION .. ': ' .. what)
end

-- Parses a non-negative integer argument; nil when it is not one.
local function int_arg(value)
  local n = tonumber(value)
  if n == nil or n ~= n or n < 0 or n ~= math.floor(n) then return nil end
  return n
end

-- `now` in epoch milliseconds: the argument when a test clock passes one, else the server clock.
local function clock_now(arg)
  if arg ~= nil and arg ~= '' then return int_arg(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
