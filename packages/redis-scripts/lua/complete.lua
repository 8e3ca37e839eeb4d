#!lua
--[[
  complete: store the result, move to SUCCEEDED and publish the terminal event, in one step
  (transitions.ts `complete`). Idempotent for the same fence.

  KEYS[1] meta hash   KEYS[2] result string   KEYS[3] event stream
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] event channel   ARGV[3] flight tag
  ARGV[4] ownerId   ARGV[5] ownerToken   ARGV[6] epoch
  ARGV[7] result   ARGV[8] resultTtlMs
  ARGV[9] inlineResultBytes (optional, default 0): a result of at most this many bytes rides in the notice

  Returns { 'OK' | 'FENCED', flat meta (empty when there is no live record), false }.
]]
--@include common

local now = clock_now(ARGV[1])
local epoch = int_arg(ARGV[6])
local ttl = int_arg(ARGV[8])
local inline_max = 0
if ARGV[9] ~= nil and ARGV[9] ~= '' then inline_max = int_arg(ARGV[9]) end
if now == nil or epoch == nil or ttl == nil or ttl < 1 or inline_max == nil then return bad_input('complete arguments') end
local rec = load_live(KEYS[1], now)
if rec == nil or not fence_matches(rec, ARGV[4], ARGV[5], epoch) then return reply('FENCED', rec) end
if rec.status == 'SUCCEEDED' then return reply('OK', rec) end
if not is_active(rec) then return reply('FENCED', rec) end
local m = rec
update(KEYS[1], m, { 'status', 'SUCCEEDED', 'updatedAt', fmt(now), 'expireAt', fmt(now + ttl), 'resultRef', 'result' }, now)
redis.call('SET', KEYS[2], ARGV[7], 'PX', fmt(ttl))
local inline = nil
if #ARGV[7] <= inline_max then inline = ARGV[7] end
publish_terminal(KEYS[3], ARGV[2], ARGV[3], m, now, inline)
return reply('OK', m)
