#!lua
--[[
  expire: mark an active flight that is past its run deadline EXPIRED, publishing the terminal notice
  (transitions.ts `expire`).

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] ttlMs

  Returns { 'OK' | 'NOT_ACTIVE' | 'NOT_DUE', the record as stored ('' when there is no live record), false }.
]]
--@include common
--@include record

local now = clock_now(ARGV[1])
local ttl = int_arg(ARGV[3])
if now == nil or ttl == nil or ttl < 1 then return bad_input('expire arguments') end
local rec = load_live(KEYS[1], now)
if rec == nil or not is_active(rec) then return reply('NOT_ACTIVE', rec) end
if now < rec.deadlineAt then return reply('NOT_DUE', rec) end
update(KEYS[1], rec, { STATUS, 'EXPIRED', UPDATED, fmt(now), EXPIRE, fmt(now + ttl) }, now)
publish_terminal(ARGV[2], rec.v)
return reply('OK', rec)
