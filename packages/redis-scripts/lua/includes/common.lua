-- Shared helpers, inlined into every flight script by scripts/gen-lua.mjs (`--@include common`).
-- Numbers are formatted with '%.0f': tostring() would print 1.7e+15 and lose the epoch's digits.
local FLIGHT_SCRIPT_VERSION = '@flight/redis-scripts/1'

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

-- A stored record: the fields the rules read (times and counters as numbers), plus `flat`, the hash as
-- HGETALL returned it, and `pos`, the index of each field's value in `flat`. Replies send `flat` (patched
-- by `update`), so an unchanged field is never parsed or formatted again.
local function to_num(value)
  if value == nil then return nil end
  return tonumber(value)
end

local function load_meta(key)
  local flat = redis.call('HGETALL', key)
  local n = #flat
  if n == 0 then return nil end
  -- Built by a constructor with every field, so the table is sized once; 0 marks an absent field
  -- (flat[0] is nil).
  local pos = { status = 0, stage = 0, requestKey = 0, sessionId = 0, ownerId = 0, ownerToken = 0, epoch = 0,
    takeovers = 0, followers = 0, createdAt = 0, updatedAt = 0, heartbeatAt = 0, expireAt = 0, deadlineAt = 0, retryable = 0,
    errorType = 0, errorCode = 0, errorMessage = 0, resultRef = 0 }
  for i = 1, n, 2 do pos[flat[i]] = i + 1 end
  local m = {
    flat = flat, pos = pos, status = flat[pos.status], epoch = to_num(flat[pos.epoch]),
    takeovers = to_num(flat[pos.takeovers]), followers = to_num(flat[pos.followers]) or 0,
    createdAt = to_num(flat[pos.createdAt]),
    updatedAt = to_num(flat[pos.updatedAt]), heartbeatAt = to_num(flat[pos.heartbeatAt]),
    expireAt = to_num(flat[pos.expireAt]), deadlineAt = to_num(flat[pos.deadlineAt]),
    ownerId = flat[pos.ownerId], ownerToken = flat[pos.ownerToken], sessionId = flat[pos.sessionId],
    retryable = flat[pos.retryable],
  }
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

-- A transition of a stored record: writes only the changed fields (`changes` = field, value, ...; numbers
-- formatted), patches the reply, keeps `m`'s rule fields current and sets the TTL to the logical expiry.
local function update(key, m, changes, now)
  redis.call('HSET', key, unpack(changes))
  local flat, pos = m.flat, m.pos
  for i = 1, #changes, 2 do
    local field, value = changes[i], changes[i + 1]
    local p = pos[field]
    if p == nil or p == 0 then
      flat[#flat + 1] = field
      flat[#flat + 1] = value
      pos[field] = #flat
    else
      flat[p] = value
    end
    if type(m[field]) == 'number' then m[field] = tonumber(value) else m[field] = value end
  end
  redis.call('PEXPIRE', key, fmt(math.max(1, m.expireAt - now)))
end

-- A record written whole (a new owner): replaces the hash, and becomes a loaded record for the reply.
local function create(key, m, now)
  -- Field order of a record written whole; other replies follow the hash's own order. Local to this
  -- function, so only scripts that create a record build it.
  local FIELDS = { 'status', 'stage', 'requestKey', 'sessionId', 'ownerId', 'ownerToken', 'epoch', 'takeovers',
    'followers', 'createdAt', 'updatedAt', 'heartbeatAt', 'expireAt', 'deadlineAt', 'retryable', 'errorType', 'errorCode',
    'errorMessage', 'resultRef' }
  local flat, pos = {}, {}
  for i = 1, #FIELDS do
    local field = FIELDS[i]
    local value = m[field]
    if type(value) == 'number' then value = fmt(value) end
    flat[2 * i - 1] = field
    flat[2 * i] = value
    pos[field] = 2 * i
  end
  redis.call('DEL', key)
  redis.call('HSET', key, unpack(flat))
  redis.call('PEXPIRE', key, fmt(math.max(1, m.expireAt - now)))
  m.flat = flat
  m.pos = pos
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
  if m == nil then return { code, {}, result or false } end
  return { code, m.flat, result or false }
end
