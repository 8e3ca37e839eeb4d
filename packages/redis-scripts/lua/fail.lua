#!lua
--[[
  fail: move to FAILED with the failure's class, code, message and retryability, and publish the
  terminal event (transitions.ts `fail`). Idempotent for the same fence.

  KEYS[1] meta hash   KEYS[2] result string   KEYS[3] event stream
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] event channel   ARGV[3] flight tag
  ARGV[4] ownerId   ARGV[5] ownerToken   ARGV[6] epoch
  ARGV[7] errorType   ARGV[8] errorCode   ARGV[9] errorMessage   ARGV[10] retryable '1' | '0'
  ARGV[11] ttlMs

  Returns { 'OK' | 'FENCED', flat meta (empty when there is no live record), false }.
]]
--@include common

local now = clock_now(ARGV[1])
local epoch = int_arg(ARGV[6])
local ttl = int_arg(ARGV[11])
if now == nil or epoch == nil or ttl == nil or ttl < 1 or (ARGV[10] ~= '1' and ARGV[10] ~= '0') then
  return bad_input('fail arguments')
end
local rec = load_live(KEYS[1], now)
if rec == nil or not fence_matches(rec, ARGV[4], ARGV[5], epoch) then return reply('FENCED', rec) end
if rec.status == 'FAILED' then return reply('OK', rec) end
if not is_active(rec) then return reply('FENCED', rec) end
local m = rec
update(KEYS[1], m, { 'status', 'FAILED', 'updatedAt', fmt(now), 'expireAt', fmt(now + ttl), 'retryable', ARGV[10],
  'errorType', ARGV[7], 'errorCode', ARGV[8], 'errorMessage', ARGV[9] }, now)
redis.call('DEL', KEYS[2])
publish_terminal(KEYS[3], ARGV[2], ARGV[3], m, now)
return reply('OK', m)
