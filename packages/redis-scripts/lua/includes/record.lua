-- The flight record's full codec and its transitions (`--@include record`, after `--@include common`);
-- the session-lock scripts do not carry it. Layout: see header.lua.
--@include header
-- The status of a header's code (its first letter); nil for anything else.
local function status_of(code)
  if code == 'R' then return 'RUNNING' elseif code == 'S' then return 'SUCCEEDED' elseif code == 'P' then return 'PENDING'
  elseif code == 'F' then return 'FAILED' elseif code == 'C' then return 'CANCELLED' elseif code == 'E' then return 'EXPIRED' end
  return nil
end

--@include codec

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
