-- The flight record's full codec and its transitions (`--@include record`, after `--@include common`);
-- the session-lock scripts do not carry it. Layout: see header.lua.
--@include header
-- Decoded values (`v`, by index, as strings):
local STATUS, SESSION, OWNER_ID, OWNER_TOKEN, EPOCH, TAKEOVERS, FOLLOWERS = 1, 4, 5, 6, 7, 8, 9
local CREATED, UPDATED, HEARTBEAT, EXPIRE, DEADLINE, RETRYABLE = 10, 11, 12, 13, 14, 15
local ERROR_TYPE, ERROR_CODE, ERROR_MESSAGE, RESULT_REF, NONCE, WATCHED, TRACEPARENT = 16, 17, 18, 19, 20, 21, 22
local FORGOTTEN = 23

-- The status of a header's code (its first letter); nil for anything else.
local function status_of(code)
  if code == 'R' then return 'RUNNING' elseif code == 'S' then return 'SUCCEEDED' elseif code == 'P' then return 'PENDING'
  elseif code == 'F' then return 'FAILED' elseif code == 'C' then return 'CANCELLED' elseif code == 'E' then return 'EXPIRED' end
  return nil
end

-- The values of a stored record, and the offset where the result after them starts; nil when the
-- string is not a record.
local function decode(s)
  if #s < HEADER_BYTES then return nil end
  local status = status_of(string.sub(s, 1, 1))
  if status == nil then return nil end
  local v = { status, '', '', '', '', '', string.sub(s, 67, 82), string.sub(s, 101, 106), string.sub(s, 107, 112),
    string.sub(s, 54, 66), string.sub(s, 2, 14), string.sub(s, 28, 40), string.sub(s, 15, 27), string.sub(s, 41, 53),
    string.sub(s, 84, 84), '', '', '', '', string.sub(s, 85, 100), string.sub(s, 113, 113), '',
    string.sub(s, 114, 129) }
  if string.sub(s, 83, 83) == '1' then v[RESULT_REF] = 'result' end
  local i = HEADER_BYTES + 1
  v[OWNER_ID], i = text_field(s, i)
  if i == nil then return nil end
  v[OWNER_TOKEN], i = text_field(s, i)
  if i == nil then return nil end
  v[SESSION], i = text_field(s, i)
  if i == nil then return nil end
  v[ERROR_TYPE], i = text_field(s, i)
  if i == nil then return nil end
  v[ERROR_CODE], i = text_field(s, i)
  if i == nil then return nil end
  v[ERROR_MESSAGE], i = text_field(s, i)
  if i == nil then return nil end
  v[TRACEPARENT], i = text_field(s, i)
  if i == nil then return nil end
  return v, i
end

-- The record of `v` (without the result). Text fields are concatenated (string.format's %s would cut a
-- short value at a NUL byte).
local function encode(v)
  local result_flag = '0'
  if v[RESULT_REF] ~= '' then result_flag = '1' end
  local head = string.format(HEADER_FORMAT, v[STATUS], time_at(tonumber(v[UPDATED])), time_at(tonumber(v[EXPIRE])),
    time_at(tonumber(v[HEARTBEAT])), time_at(tonumber(v[DEADLINE])), time_at(tonumber(v[CREATED])), tonumber(v[EPOCH]),
    result_flag, v[RETRYABLE], v[NONCE], math.min(tonumber(v[TAKEOVERS]) or 0, 999999),
    math.min(tonumber(v[FOLLOWERS]) or 0, 999999), v[WATCHED], tonumber(v[FORGOTTEN]) or 0)
  local a, b, c, d, e, f, g = v[OWNER_ID], v[OWNER_TOKEN], v[SESSION], v[ERROR_TYPE], v[ERROR_CODE], v[ERROR_MESSAGE], v[TRACEPARENT]
  return head .. #a .. ':' .. a .. #b .. ':' .. b .. #c .. ':' .. c .. #d .. ':' .. d .. #e .. ':' .. e .. #f .. ':' .. f
    .. #g .. ':' .. g
end

-- A stored record: `v`, its values ('' = default), `result` ('' unless SUCCEEDED), `rec` (the record as
-- stored, which replies carry) and the numbers the rules read. nil when there is no usable record.
local function load_from(s)
  if not s then return nil end
  local v, at = decode(s)
  if v == nil then return nil end
  local m = {
    v = v, result = string.sub(s, at), rec = string.sub(s, 1, at - 1), status = v[STATUS],
    epoch = tonumber(v[EPOCH]), expireAt = tonumber(v[EXPIRE]), deadlineAt = tonumber(v[DEADLINE]),
    heartbeatAt = tonumber(v[HEARTBEAT]),
  }
  if m.epoch == nil or m.expireAt == nil or m.deadlineAt == nil or m.heartbeatAt == nil then return nil end
  return m
end

-- The record as the state machine sees it: nil unless live at `now` (the logical twin of the TTL).
-- `s`: the flight's string when the script has read it already.
local function load_live(key, now, s)
  if s == nil then s = redis.call('GET', key) end
  local m = load_from(s)
  if m ~= nil and m.expireAt > now then return m end
  return nil
end

-- Writes the record (and its result, if any) in one SET, with the TTL of its logical expiry; returns the
-- record as stored (without the result).
local function store(key, v, result, now)
  local rec = encode(v)
  redis.call('SET', key, rec .. result, 'PX', fmt(math.max(1, time_at(tonumber(v[EXPIRE])) - now)))
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
-- verbatim after its byte count, so any bytes (spaces included) parse back unambiguously. Sent only when
-- somebody can be waiting for it (see has_listeners_at in header.lua).
local function publish_terminal(channel, v, inline)
  if (tonumber(v[FOLLOWERS]) or 0) == 0 and v[WATCHED] ~= '1' then return end
  local notice = v[NONCE] .. ' ' .. fmt(tonumber(v[EPOCH])) .. ' ' .. v[STATUS]
  if inline ~= nil then notice = notice .. ' ' .. #inline .. ' ' .. inline end
  redis.call('SPUBLISH', channel, notice)
end

-- Every flight script replies { code, the record as stored ('' when none; reply.ts decodes it), result or
-- false }: one bulk string, far cheaper to send than the 20 values.
local function reply(code, m, result)
  if m == nil then return { code, '', result or false } end
  return { code, m.rec, result or false }
end
