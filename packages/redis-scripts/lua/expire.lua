#!lua
--[[
  expire: mark an active flight that is past its run deadline EXPIRED, publishing the terminal event
  (transitions.ts `expire`).

  KEYS[1] meta hash   KEYS[2] result string   KEYS[3] event stream
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] event channel   ARGV[3] flight tag
  ARGV[4] ttlMs

  Returns { 'OK' | 'NOT_ACTIVE' | 'NOT_DUE', flat meta (empty when there is no live record), false }.
]]
--@include common

local now = clock_now(ARGV[1])
local ttl = int_arg(ARGV[4])
if now == nil or ttl == nil or ttl < 1 then return bad_input('expire arguments') end
local rec = load_live(KEYS[1], now)
if rec == nil or not is_active(rec) then return reply('NOT_ACTIVE', rec) end
if now < rec.deadlineAt then return reply('NOT_DUE', rec) end
local m = rec
update(KEYS[1], m, { 'status', 'EXPIRED', 'updatedAt', fmt(now), 'expireAt', fmt(now + ttl) }, now)
publish_terminal(KEYS[3], ARGV[2], ARGV[3], m, now)
return reply('OK', m)
