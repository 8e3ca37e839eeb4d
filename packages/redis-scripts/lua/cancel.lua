#!lua
--[[
  cancel: cancel an active flight cluster-wide (no fence: an operator action), publishing the
  terminal event (transitions.ts `cancel`).

  KEYS[1] meta hash   KEYS[2] result string   KEYS[3] event stream
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] event channel   ARGV[3] flight tag
  ARGV[4] reason   ARGV[5] ttlMs

  Returns { 'OK' | 'NOT_ACTIVE', flat meta (empty when there is no live record), false }.
]]
--@include common

local now = clock_now(ARGV[1])
local ttl = int_arg(ARGV[5])
if now == nil or ttl == nil or ttl < 1 then return bad_input('cancel arguments') end
local rec = load_live(KEYS[1], now)
if rec == nil or not is_active(rec) then return reply('NOT_ACTIVE', rec) end
local m = rec
update(KEYS[1], m, { 'status', 'CANCELLED', 'updatedAt', fmt(now), 'expireAt', fmt(now + ttl), 'retryable', '0',
  'errorType', 'CANCELLED', 'errorCode', 'E_FLIGHT_CANCELLED', 'errorMessage', ARGV[4] }, now)
publish_terminal(KEYS[3], ARGV[2], ARGV[3], m, now)
return reply('OK', m)
