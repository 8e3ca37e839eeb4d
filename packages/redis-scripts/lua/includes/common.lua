-- Shared helpers, inlined into every flight script by scripts/gen-lua.mjs (`--@include common`).
-- Numbers are formatted with '%.0f': tostring() would print 1.7e+15 and lose the epoch's digits.
local FLIGHT_SCRIPT_VERSION = '@flight/redis-scripts/2'

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

-- The record's fields, in the order of every reply (reply.ts decodes by position). A field that is
-- empty, '0' or false is not stored: HMGET answers nil and the reader takes the default.
local FIELDS = { 'status', 'stage', 'requestKey', 'sessionId', 'ownerId', 'ownerToken', 'epoch', 'takeovers',
  'followers', 'createdAt', 'updatedAt', 'heartbeatAt', 'expireAt', 'deadlineAt', 'retryable', 'errorType',
  'errorCode', 'errorMessage', 'resultRef', 'nonce' }
local STATUS, SESSION, OWNER_ID, OWNER_TOKEN, EPOCH, TAKEOVERS, FOLLOWERS = 1, 4, 5, 6, 7, 8, 9
local CREATED, UPDATED, HEARTBEAT, EXPIRE, DEADLINE, RETRYABLE = 10, 11, 12, 13, 14, 15
local ERROR_TYPE, ERROR_CODE, ERROR_MESSAGE, RESULT_REF, NONCE = 16, 17, 18, 19, 20

-- A stored record: `v`, the HMGET values in FIELDS order (false = absent), and the numbers the rules
-- read. nil when there is no usable record.
local function load_meta(key)
  local v = redis.call('HMGET', key, unpack(FIELDS))
  if not v[STATUS] then return nil end
  local m = {
    v = v, status = v[STATUS], epoch = tonumber(v[EPOCH]), expireAt = tonumber(v[EXPIRE]),
    deadlineAt = tonumber(v[DEADLINE]), heartbeatAt = tonumber(v[HEARTBEAT]),
  }
  if m.epoch == nil or m.expireAt == nil or m.deadlineAt == nil or m.heartbeatAt == nil then return nil end
  return m
end

-- The record as the state machine sees it: nil unless live at `now` (the logical twin of the TTL).
-- `existed` tells whether a hash was there at all (a new owner then replaces it whole).
local function load_live(key, now)
  local m = load_meta(key)
  if m ~= nil and m.expireAt > now then return m, true end
  return nil, m ~= nil
end

local function is_active(m)
  return m.status == 'PENDING' or m.status == 'RUNNING'
end

local function fence_matches(m, owner_id, owner_token, epoch)
  return m.v[OWNER_ID] == owner_id and m.v[OWNER_TOKEN] == owner_token and m.epoch == epoch
end

-- A transition of a stored record: writes only the changed fields (`changes` = index, value, ...;
-- values are strings), patches the reply values, and sets the TTL to the (new) logical expiry.
local function update(key, m, changes, now)
  local args = {}
  local v = m.v
  for i = 1, #changes, 2 do
    local index, value = changes[i], changes[i + 1]
    args[i] = FIELDS[index]
    args[i + 1] = value
    v[index] = value
  end
  redis.call('HSET', key, unpack(args))
  redis.call('PEXPIRE', key, fmt(math.max(1, tonumber(v[EXPIRE]) - now)))
end

-- A record written whole (a new owner): `values` in FIELDS order, false for a default. Only set fields
-- are stored; a previous hash is dropped first so no field of the old run survives.
local function create(key, values, existed, now)
  if existed then redis.call('DEL', key) end
  local args, n = {}, 0
  for i = 1, #FIELDS do
    local value = values[i]
    if value then
      args[n + 1] = FIELDS[i]
      args[n + 2] = value
      n = n + 2
    end
  end
  redis.call('HSET', key, unpack(args))
  redis.call('PEXPIRE', key, fmt(math.max(1, tonumber(values[EXPIRE]) - now)))
end

-- The terminal notice, on the flight's own channel (ARGV[2]: same hash tag as its keys, naming the DB).
-- SPUBLISH: on a cluster it stays on the shard that owns the flight's slot. The notice is
-- `nonce epoch status`; with `inline` (a small result) it goes on ` <bytes> <result>`, the result
-- verbatim after its byte count, so any bytes (spaces included) parse back unambiguously.
local function publish_terminal(channel, v, inline)
  local notice = (v[NONCE] or '') .. ' ' .. v[EPOCH] .. ' ' .. v[STATUS]
  if inline ~= nil then notice = notice .. ' ' .. #inline .. ' ' .. inline end
  redis.call('SPUBLISH', channel, notice)
end

-- Every flight script replies { code, meta values in FIELDS order (empty when none), result or false }.
local function reply(code, m, result)
  if m == nil then return { code, {}, result or false } end
  return { code, m.v, result or false }
end
