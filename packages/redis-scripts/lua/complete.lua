#!lua
--[[
  complete: store the result, move to SUCCEEDED and publish the terminal notice, in one step
  (transitions.ts `complete`). Idempotent for the same fence.

  KEYS[1] the flight's record (one string: see common.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] ownerId   ARGV[4] ownerToken   ARGV[5] epoch
  ARGV[6] result   ARGV[7] resultTtlMs
  ARGV[8] inlineResultBytes (optional, default 0): a result of at most this many bytes rides in the notice

  Returns { 'OK' | 'FENCED' | 'FORGOTTEN', the record as stored ('' when there is no live record), false }.
]]
--@include common
--@include record
--@include forgotten

local now = clock_now(ARGV[1])
local epoch = int_arg(ARGV[5])
local ttl = int_arg(ARGV[7])
local inline_max = 0
if ARGV[8] ~= nil and ARGV[8] ~= '' then inline_max = int_arg(ARGV[8]) end
if now == nil or epoch == nil or ttl == nil or ttl < 1 or inline_max == nil then return bad_input('complete arguments') end
local rec = load_live(KEYS[1], now)
if rec ~= nil and forgotten_epoch(rec, epoch) then return end_forgotten(rec, 'SUCCEEDED', ttl, now) end
if rec == nil or not fence_matches(rec, ARGV[3], ARGV[4], epoch) then return reply('FENCED', rec) end
if rec.status == 'SUCCEEDED' then return reply('OK', rec) end
if not is_active(rec) then return reply('FENCED', rec) end
-- The record and its result, in one write.
rec.result = ARGV[6]
update(KEYS[1], rec, { STATUS, 'SUCCEEDED', UPDATED, fmt(now), EXPIRE, fmt(now + ttl), RESULT_REF, 'result' }, now)
local inline = nil
if #ARGV[6] <= inline_max then inline = ARGV[6] end
publish_terminal(ARGV[2], rec.v, inline)
return reply('OK', rec)
