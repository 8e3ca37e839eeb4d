#!lua
--[[
  watch: what `read` answers (with the result), for a waiter that did not join the flight by `acquire`
  (so is not counted in `followers`): marks an active record watched first, so that its terminal notice
  is published (complete, fail, ... publish only when somebody can be listening).

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock

  Returns { 'OK', the record as stored ('' when there is no live record), result or false }.
]]
--@include common
--@include record

local now = clock_now(ARGV[1])
if now == nil then return bad_input('watch arguments') end
local rec = load_live(KEYS[1], now)
if rec == nil then return reply('OK', nil) end
if is_active(rec) and rec.v[WATCHED] ~= '1' then
  -- The header's watched flag, the TTL kept (an active record has no result after it).
  rec.rec = string.sub(rec.rec, 1, WATCHED_AT - 1) .. '1' .. string.sub(rec.rec, WATCHED_END + 1)
  redis.call('SET', KEYS[1], rec.rec, 'KEEPTTL')
end
local result = false
if rec.status == 'SUCCEEDED' then result = rec.result end
return reply('OK', rec, result)
