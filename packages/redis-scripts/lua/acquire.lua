#!lua
--[[
  acquire: join a flight or become its owner (transitions.ts `acquire`, the seed's acquireOrJoin).

  KEYS[1] meta hash   KEYS[2] result string   KEYS[3] event stream   (one hash tag)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] event channel   ARGV[3] flight tag
  ARGV[4] stage   ARGV[5] request key
  ARGV[6] '1' when a sessionId is given, else '0'   ARGV[7] sessionId
  ARGV[8] ownerId   ARGV[9] ownerToken   ARGV[10] joinEpoch or ''
  ARGV[11] takeoverAfterMs   ARGV[12] leaseTtlMs   ARGV[13] maxRunMs

  Returns { outcome, flat meta, result or false }, outcome one of
  OWNER_NEW | OWNER_TAKEOVER | FOLLOWER_WAIT | REPLAY_SUCCESS | REPLAY_FAILURE.
  Writes for OWNER_NEW / OWNER_TAKEOVER with a new token, and counts a first-time FOLLOWER_WAIT in
  `followers`; everything is checked first.
]]
--@include common

local now = clock_now(ARGV[1])
local takeover_after = int_arg(ARGV[11])
local lease_ttl = int_arg(ARGV[12])
local max_run = int_arg(ARGV[13])
local join_epoch = nil
if ARGV[10] ~= '' then join_epoch = int_arg(ARGV[10]) end
if now == nil or takeover_after == nil or lease_ttl == nil or max_run == nil or lease_ttl < 1 then
  return bad_input('acquire arguments')
end
local owner_id, owner_token = ARGV[8], ARGV[9]

local function new_owner(prev, outcome)
  local session = ''
  if ARGV[6] == '1' then session = ARGV[7] elseif prev ~= nil then session = prev.sessionId end
  local m = {
    status = 'PENDING', stage = ARGV[4], requestKey = ARGV[5], sessionId = session,
    ownerId = owner_id, ownerToken = owner_token,
    epoch = math.max((prev and prev.epoch or 0) + 1, now * 1000),
    takeovers = prev and (prev.takeovers + 1) or 0, followers = 0,
    createdAt = prev and prev.createdAt or now,
    updatedAt = now, heartbeatAt = now, expireAt = now + lease_ttl, deadlineAt = now + max_run,
    retryable = '0', errorType = '', errorCode = '', errorMessage = '', resultRef = '',
  }
  return m
end

local function take(m, outcome)
  create(KEYS[1], m, now)
  redis.call('DEL', KEYS[2])
  return reply(outcome, m)
end

local rec = load_live(KEYS[1], now)
local result = false
if rec ~= nil and rec.status == 'SUCCEEDED' then result = redis.call('GET', KEYS[2]) end

if rec == nil or (rec.status == 'SUCCEEDED' and not result) then
  -- A lost record keeps no epoch to build on; the clock floor of the epoch keeps it growing.
  local m = new_owner(nil)
  if rec ~= nil then m.epoch = math.max(rec.epoch + 1, now * 1000) end
  return take(m, 'OWNER_NEW')
end

local status = rec.status
if status == 'SUCCEEDED' then return reply('REPLAY_SUCCESS', rec, result) end
if status == 'FAILED' then
  if rec.retryable == '1' then return take(new_owner(rec), 'OWNER_TAKEOVER') end
  return reply('REPLAY_FAILURE', rec)
end
if status == 'CANCELLED' then
  if join_epoch ~= nil and join_epoch == rec.epoch then return reply('REPLAY_FAILURE', rec) end
  return take(new_owner(rec), 'OWNER_TAKEOVER')
end
if status == 'EXPIRED' then return take(new_owner(rec), 'OWNER_TAKEOVER') end
-- PENDING or RUNNING
if rec.ownerToken == owner_token and rec.ownerId == owner_id then
  if rec.takeovers > 0 then return reply('OWNER_TAKEOVER', rec) end
  return reply('OWNER_NEW', rec)
end
if now - rec.heartbeatAt > takeover_after or now >= rec.deadlineAt then
  return take(new_owner(rec), 'OWNER_TAKEOVER')
end
-- A caller joining this epoch for the first time is counted; its later polls pass joinEpoch.
if join_epoch == nil or join_epoch ~= rec.epoch then
  update(KEYS[1], rec, { 'followers', fmt(rec.followers + 1) }, now)
end
return reply('FOLLOWER_WAIT', rec)
