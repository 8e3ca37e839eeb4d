#!lua flags=no-writes
--[[
  read: the live metadata of a flight and, when asked and SUCCEEDED, its result. Read-only.
  Liveness is judged at `now` (the logical twin of the TTL), like every other script.

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] '1' to return the result too

  Returns { 'OK', the record as stored ('' when there is no live record), result or false }.
]]
--@include common
--@include record

local now = clock_now(ARGV[1])
if now == nil then return bad_input('read arguments') end
local rec = load_live(KEYS[1], now)
local result = false
if rec ~= nil and rec.status == 'SUCCEEDED' and ARGV[2] == '1' then result = rec.result end
return reply('OK', rec, result)
