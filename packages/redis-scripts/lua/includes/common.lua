-- Shared helpers, inlined into every flight script by scripts/gen-lua.mjs (`--@include common`).
-- Numbers are formatted with '%.0f': tostring() would print 1.7e+15 and lose the epoch's digits.
local FLIGHT_SCRIPT_VERSION = '@flight/redis-scripts/1'

local FIELDS = { 'status', 'stage', 'requestKey', 'sessionId', 'ownerId', 'ownerToken', 'epoch', 'takeovers',
  'createdAt', 'updatedAt', 'heartbeatAt', 'expireAt', 'deadlineAt', 'retryable', 'errorType', 'errorCode',
  'errorMessage', 'resultRef' }
local NUMERIC = { epoch = true, takeovers = true, createdAt = true, updatedAt = true, heartbeatAt = true,
  expireAt = true, deadlineAt = true }

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

local function load_meta(key)
  local flat = redis.call('HGETALL', key)
  if #flat == 0 then return nil end
  local m = {}
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    if NUMERIC[field] then m[field] = tonumber(value) else m[field] = value end
  end
  if m.status == nil or m.epoch == nil or m.expireAt == nil or m.deadlineAt == nil or m.heartbeatAt == nil
    or m.takeovers == nil or m.createdAt == nil or m.updatedAt == nil then
    return nil
  end
  return m
end

-- The record as the state machine sees it: nil unless live at `now` (the logical twin of the TTL).
local function load_live(key, now)
  local m = load_meta(key)
  if m ~= nil and m.expireAt > now then return m end
  return nil
end

local function is_active(m)
  return m.status == 'PENDING' or m.status == 'RUNNING'
end

local function fence_matches(m, owner_id, owner_token, epoch)
  return m.ownerId == owner_id and m.ownerToken == owner_token and m.epoch == epoch
end

local function copy(m)
  local c = {}
  for k, v in pairs(m) do c[k] = v end
  return c
end

local function flat_meta(m)
  if m == nil then return {} end
  local out = {}
  for _, field in ipairs(FIELDS) do
    local value = m[field]
    if NUMERIC[field] then value = fmt(value) end
    out[#out + 1] = field
    out[#out + 1] = value
  end
  return out
end

-- Replaces the whole hash and sets its TTL to the record's logical expiry.
local function save_meta(key, m, now)
  redis.call('DEL', key)
  redis.call('HSET', key, unpack(flat_meta(m)))
  redis.call('PEXPIRE', key, fmt(math.max(1, m.expireAt - now)))
end

-- The terminal event: a stream entry (the record, bounded and with a TTL) and a compact notice on the
-- prefix's channel (the wake-up; PUBLISH from a script reaches subscribers on every cluster node).
-- The notice is `tag epoch status`; with `inline` (a small result) it goes on ` <bytes> <result>`, the
-- result verbatim after its byte count, so any bytes (spaces included) parse back unambiguously.
local function publish_terminal(ev_key, channel, tag, m, now, inline)
  redis.call('XADD', ev_key, 'MAXLEN', '8', '*', 'status', m.status, 'epoch', fmt(m.epoch))
  redis.call('PEXPIRE', ev_key, fmt(math.max(1, m.expireAt - now)))
  local notice = tag .. ' ' .. fmt(m.epoch) .. ' ' .. m.status
  if inline ~= nil then notice = notice .. ' ' .. #inline .. ' ' .. inline end
  redis.call('PUBLISH', channel, notice)
end

-- Every flight script replies { code, flat meta (empty when none), result or false }.
local function reply(code, m, result)
  return { code, flat_meta(m), result or false }
end
