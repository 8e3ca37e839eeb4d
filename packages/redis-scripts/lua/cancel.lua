#!lua
--[[
  cancel: cancel an active flight cluster-wide (no fence: an operator action), publishing the
  terminal notice (transitions.ts `cancel`). With an epoch, only that run.

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] reason   ARGV[4] ttlMs   ARGV[5] epoch, or '' for whatever run is active

  Returns { 'OK' | 'NOT_ACTIVE' | 'EPOCH_MISMATCH', the record as stored ('' when there is no live record), false }.
]]
--@include common
--@include record

local now = clock_now(ARGV[1])
local ttl = int_arg(ARGV[4])
local epoch = nil
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  epoch = int_arg(ARGV[5])
  if epoch == nil then return bad_input('cancel epoch') end
end
if now == nil or ttl == nil or ttl < 1 then return bad_input('cancel arguments') end
local rec = load_live(KEYS[1], now)
if rec == nil or not is_active(rec) then return reply('NOT_ACTIVE', rec) end
if epoch ~= nil and epoch ~= rec.epoch then return reply('EPOCH_MISMATCH', rec) end
update(KEYS[1], rec, { STATUS, 'CANCELLED', UPDATED, fmt(now), EXPIRE, fmt(now + ttl), RETRYABLE, '0',
  ERROR_TYPE, 'CANCELLED', ERROR_CODE, 'E_FLIGHT_CANCELLED', ERROR_MESSAGE, ARGV[3] }, now)
publish_terminal(ARGV[2], rec.v)
return reply('OK', rec)
