#!lua
--[[
  acquire: join a flight or become its owner (transitions.ts `acquire`).

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] '1' when a sessionId is given, else '0'   ARGV[3] sessionId
  ARGV[4] ownerId   ARGV[5] ownerToken   ARGV[6] joinEpoch or ''
  ARGV[7] takeoverAfterMs   ARGV[8] leaseTtlMs   ARGV[9] maxRunMs
  ARGV[10] '1' when the owner runs at once (a new record is created RUNNING), else '0'
  ARGV[11] the caller's traceparent, or '' (kept only by a record this call creates)
  ARGV[12] '1' to be offered the flight's stale copy (KEYS[2]), else '0' or absent
  ARGV[13] '1' when a caller that followed a run gets its failure even when retryable (joinFailures), else absent
  KEYS[2] the flight's stale copy (with ARGV[12] only; see includes/stale.lua)
  (stage and request key are not sent: the key is their digest, and the record does not store them)

  Returns { outcome, the record as stored, result or false } — for an OWNER_NEW on no record at all,
  { 'OWNER_NEW', { epoch, now, nonce }, false }: the caller builds the rest from its own input —, outcome one of
  OWNER_NEW | OWNER_TAKEOVER | FOLLOWER_WAIT | REPLAY_SUCCESS | REPLAY_FAILURE. With ARGV[12], any outcome but
  REPLAY_SUCCESS has the stale copy as a 4th element while it may be served (transitions.ts `acquire`):
  { epoch, ageMs, revalidateForMs, errorForMs, result }.
  Writes for OWNER_NEW / OWNER_TAKEOVER with a new token, and counts a first-time FOLLOWER_WAIT in
  `followers`; everything is checked first.
]]
--@include common
--@include header

local now = clock_now(ARGV[1])
local takeover_after = int_arg(ARGV[7])
local lease_ttl = int_arg(ARGV[8])
local max_run = int_arg(ARGV[9])
local join_epoch = nil
if ARGV[6] ~= '' then join_epoch = int_arg(ARGV[6]) end
if now == nil or takeover_after == nil or lease_ttl == nil or max_run == nil or lease_ttl < 1 or now > MAX_TIME then
  return bad_input('acquire arguments')
end
local owner_id, owner_token = ARGV[4], ARGV[5]
local traceparent = ARGV[11] or ''

--@include stale
-- Every reply goes through `finish`: the stale copy rides with it when asked for (ARGV[12]).
local function finish(r)
  if ARGV[12] == '1' and r[1] ~= 'REPLAY_SUCCESS' then r[4] = stale_offer(KEYS[2], now) end
  return r
end

-- A new owner's record (transitions.ts `newOwnerMeta`); `prev` is the live record it replaces (as stored),
-- if any, and `prev_session` its sessionId. The forgotten epoch is carried over (forgotten.lua).
-- Waiters of `prev`'s run that still listen (it had followers, or was watched) are woken by this run's
-- notice, so the new record is watched for them.
local function take(prev, prev_session, outcome, epoch_floor)
  local session = ''
  if ARGV[2] == '1' then session = ARGV[3] elseif prev ~= nil then session = prev_session end
  local code = 'P'
  if ARGV[10] == '1' then code = 'R' end
  local takeovers, created, watched, forgotten = 0, now, '0', 0
  if prev ~= nil then
    forgotten = tonumber(string.sub(prev, FORGOTTEN_AT, FORGOTTEN_END)) or 0
    takeovers = (tonumber(string.sub(prev, TAKEOVERS_AT, TAKEOVERS_END)) or 0) + 1
    created = tonumber(string.sub(prev, CREATED_AT, CREATED_END)) or now
    if has_listeners_at(prev) then watched = '1' end
  end
  local epoch = math.max(epoch_floor + 1, now * 1000)
  local nonce = string.sub(redis.sha1hex(owner_token), 1, 16)
  local rec = encode_record(code, now, now + lease_ttl, now, now + max_run, created, epoch, '0', '0', nonce, takeovers,
    0, watched, forgotten, owner_id, owner_token, session, '', '', '', traceparent)
  redis.call('SET', KEYS[1], rec, 'PX', ARGV[8])
  -- A fresh record is fully known to the caller but for the epoch, the server time and the nonce: reply
  -- those three (see reply.ts `freshOwnerMeta`), not the record.
  if prev == nil and epoch_floor == 0 then return { outcome, { fmt(epoch), fmt(now), nonce }, false } end
  return { outcome, rec, false }
end

-- No flight yet (the common case): created without decoding anything.
local s = redis.call('GET', KEYS[1])
if not s then return finish(take(nil, nil, 'OWNER_NEW', 0)) end

--@include record
--@include forgotten
local rec = load_live(KEYS[1], now, s)
if rec == nil then return finish(take(nil, nil, 'OWNER_NEW', 0)) end

-- A forgotten run is neither joined nor replayed by new callers; its owner and its own followers
-- (joinEpoch) keep waiting for it while it is active (transitions.ts `acquire`).
if forgotten_epoch(rec, rec.epoch) then
  local active = is_active(rec)
  if active and rec.v[OWNER_TOKEN] == owner_token and rec.v[OWNER_ID] == owner_id then
    if (tonumber(rec.v[TAKEOVERS]) or 0) > 0 then return finish(reply('OWNER_TAKEOVER', rec)) end
    return finish(reply('OWNER_NEW', rec))
  end
  local stale = now - rec.heartbeatAt > takeover_after or now >= rec.deadlineAt
  if active and not stale and join_epoch == rec.epoch then return finish(reply('FOLLOWER_WAIT', rec)) end
  return finish(take(rec.rec, rec.v[SESSION], 'OWNER_TAKEOVER', rec.epoch))
end

local status = rec.status
if status == 'SUCCEEDED' then return finish(reply('REPLAY_SUCCESS', rec, rec.result)) end
if status == 'FAILED' then
  local own_failure = ARGV[13] == '1' and join_epoch ~= nil and join_epoch == rec.epoch
  if rec.v[RETRYABLE] == '1' and not own_failure then return finish(take(rec.rec, rec.v[SESSION], 'OWNER_TAKEOVER', rec.epoch)) end
  return finish(reply('REPLAY_FAILURE', rec))
end
if status == 'CANCELLED' then
  if join_epoch ~= nil and join_epoch == rec.epoch then return finish(reply('REPLAY_FAILURE', rec)) end
  return finish(take(rec.rec, rec.v[SESSION], 'OWNER_TAKEOVER', rec.epoch))
end
if status == 'EXPIRED' then return finish(take(rec.rec, rec.v[SESSION], 'OWNER_TAKEOVER', rec.epoch)) end
-- PENDING or RUNNING
if rec.v[OWNER_TOKEN] == owner_token and rec.v[OWNER_ID] == owner_id then
  if (tonumber(rec.v[TAKEOVERS]) or 0) > 0 then return finish(reply('OWNER_TAKEOVER', rec)) end
  return finish(reply('OWNER_NEW', rec))
end
if now - rec.heartbeatAt > takeover_after or now >= rec.deadlineAt then
  return finish(take(rec.rec, rec.v[SESSION], 'OWNER_TAKEOVER', rec.epoch))
end
-- A caller joining this epoch for the first time is counted (the header's followers field patched, the TTL
-- kept; an active record has no result after it); its later polls pass joinEpoch.
if join_epoch == nil or join_epoch ~= rec.epoch then
  local followers = string.format('%06.0f', math.min((tonumber(rec.v[FOLLOWERS]) or 0) + 1, 999999))
  rec.rec = string.sub(rec.rec, 1, FOLLOWERS_AT - 1) .. followers .. string.sub(rec.rec, FOLLOWERS_END + 1)
  redis.call('SET', KEYS[1], rec.rec, 'KEEPTTL')
end
return finish(reply('FOLLOWER_WAIT', rec))
