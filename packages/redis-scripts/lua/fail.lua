#!lua
--[[
  fail: move to FAILED with the failure's class, code, message and retryability, and publish the
  terminal notice (transitions.ts `fail`). Idempotent for the same fence.

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] ownerId   ARGV[4] ownerToken   ARGV[5] epoch
  ARGV[6] errorType   ARGV[7] errorCode   ARGV[8] errorMessage   ARGV[9] retryable '1' | '0'
  ARGV[10] ttlMs

  Returns { 'OK' | 'FENCED' | 'FORGOTTEN', the record as stored ('' when there is no live record), false, or
  'unchanged' on an OK that wrote nothing (the run was FAILED already) }.
]]
--@include common
--@include record
--@include forgotten

local now = clock_now(ARGV[1])
local epoch = int_arg(ARGV[5])
local ttl = int_arg(ARGV[10])
if now == nil or epoch == nil or ttl == nil or ttl < 1 or (ARGV[9] ~= '1' and ARGV[9] ~= '0') then
  return bad_input('fail arguments')
end
local rec = load_live(KEYS[1], now)
if rec ~= nil and forgotten_epoch(rec, epoch) then return end_forgotten(rec, 'FAILED', ttl, now) end
if rec == nil or not fence_matches(rec, ARGV[3], ARGV[4], epoch) then return reply('FENCED', rec) end
-- Already stored (a repeat of this write): its updatedAt is the first write's time, not now.
if rec.status == 'FAILED' then return reply('OK', rec, 'unchanged') end
if not is_active(rec) then return reply('FENCED', rec) end
update(KEYS[1], rec, { STATUS, 'FAILED', UPDATED, fmt(now), EXPIRE, fmt(now + ttl), RETRYABLE, ARGV[9],
  ERROR_TYPE, ARGV[6], ERROR_CODE, ARGV[7], ERROR_MESSAGE, ARGV[8] }, now)
publish_terminal(ARGV[2], rec.v)
return reply('OK', rec)
