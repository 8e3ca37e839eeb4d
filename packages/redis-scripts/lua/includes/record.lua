-- The flight record and its transitions, inlined into every flight script (`--@include record`, after
-- `--@include common`); the session-lock scripts do not carry it.
-- A flight is ONE string key: its record's fields in FIELDS order, each as `<bytes>:<value>`, then (once
-- SUCCEEDED) the result, verbatim. One GET reads it, one SET ... PX writes it with its TTL. Replies send the
-- values in FIELDS order (reply.ts decodes by position); stage and requestKey are not stored (they are
-- the flight's ref, which the caller knows).
-- FIELDS (by index; a comment, not a table built on every call):
--   1 status  2 stage  3 requestKey  4 sessionId  5 ownerId  6 ownerToken  7 epoch  8 takeovers  9 followers
--   10 createdAt  11 updatedAt  12 heartbeatAt  13 expireAt  14 deadlineAt  15 retryable  16 errorType
--   17 errorCode  18 errorMessage  19 resultRef  20 nonce  21 forgottenEpoch ('' = none; see forgotten.lua)
local N_FIELDS = 21
local STATUS, SESSION, OWNER_ID, OWNER_TOKEN, EPOCH, TAKEOVERS, FOLLOWERS = 1, 4, 5, 6, 7, 8, 9
local CREATED, UPDATED, HEARTBEAT, EXPIRE, DEADLINE, RETRYABLE = 10, 11, 12, 13, 14, 15
local ERROR_TYPE, ERROR_CODE, ERROR_MESSAGE, RESULT_REF, NONCE = 16, 17, 18, 19, 20

-- The values of a stored record, and the offset where the result after them starts; nil when the
-- string is not a record.
local function decode(s)
  local v, i = {}, 1
  for f = 1, N_FIELDS do
    local j = string.find(s, ':', i, true)
    if j == nil then return nil end
    local n = tonumber(string.sub(s, i, j - 1))
    if n == nil then return nil end
    v[f] = string.sub(s, j + 1, j + n)
    i = j + n + 1
  end
  return v, i
end

local function encode(v)
  local parts = {}
  for f = 1, N_FIELDS do
    local x = v[f]
    parts[3 * f - 2] = #x
    parts[3 * f - 1] = ':'
    parts[3 * f] = x
  end
  return table.concat(parts)
end

-- A stored record: `v`, its values in FIELDS order ('' = default), `result` ('' unless SUCCEEDED), `rec`
-- (the record as stored, which replies carry) and the numbers the rules read. nil when there is no usable
-- record.
local function load_meta(key)
  local s = redis.call('GET', key)
  if not s then return nil end
  local v, at = decode(s)
  if v == nil or v[STATUS] == '' then return nil end
  local m = {
    v = v, result = string.sub(s, at), rec = string.sub(s, 1, at - 1), status = v[STATUS],
    epoch = tonumber(v[EPOCH]), expireAt = tonumber(v[EXPIRE]), deadlineAt = tonumber(v[DEADLINE]),
    heartbeatAt = tonumber(v[HEARTBEAT]),
  }
  if m.epoch == nil or m.expireAt == nil or m.deadlineAt == nil or m.heartbeatAt == nil then return nil end
  return m
end

-- The record as the state machine sees it: nil unless live at `now` (the logical twin of the TTL).
local function load_live(key, now)
  local m = load_meta(key)
  if m ~= nil and m.expireAt > now then return m end
  return nil
end

-- Writes the record (and its result, if any) in one SET, with the TTL of its logical expiry; returns the
-- record as stored (without the result).
local function store(key, v, result, now)
  local rec = encode(v)
  redis.call('SET', key, rec .. result, 'PX', fmt(math.max(1, tonumber(v[EXPIRE]) - now)))
  return rec
end

local function is_active(m)
  return m.status == 'PENDING' or m.status == 'RUNNING'
end

local function fence_matches(m, owner_id, owner_token, epoch)
  return m.v[OWNER_ID] == owner_id and m.v[OWNER_TOKEN] == owner_token and m.epoch == epoch
end

-- A transition of a stored record: patches the changed fields (`changes` = index, value, ...; values
-- are strings) and writes the record back with the TTL of its (new) logical expiry.
local function update(key, m, changes, now)
  local v = m.v
  for i = 1, #changes, 2 do v[changes[i]] = changes[i + 1] end
  m.rec = store(key, v, m.result, now)
end

-- The terminal notice, on the flight's own channel (ARGV[2]: same hash tag as its keys, naming the DB).
-- SPUBLISH: on a cluster it stays on the shard that owns the flight's slot. The notice is
-- `nonce epoch status`; with `inline` (a small result) it goes on ` <bytes> <result>`, the result
-- verbatim after its byte count, so any bytes (spaces included) parse back unambiguously.
local function publish_terminal(channel, v, inline)
  local notice = v[NONCE] .. ' ' .. v[EPOCH] .. ' ' .. v[STATUS]
  if inline ~= nil then notice = notice .. ' ' .. #inline .. ' ' .. inline end
  redis.call('SPUBLISH', channel, notice)
end

-- Every flight script replies { code, the record as stored ('' when none; reply.ts decodes it), result or
-- false }: one bulk string, far cheaper to send than the 20 values.
local function reply(code, m, result)
  if m == nil then return { code, '', result or false } end
  return { code, m.rec, result or false }
end
