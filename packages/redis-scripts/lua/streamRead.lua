#!lua
--[[
  streamRead: entries of one run's stream after an id (XRANGE on the run's own key: no multi-key command,
  so it works on a cluster), with the flight's record. With ARGV[4] = '1' an active record is marked
  watched first (as watch.lua does), so its progress and terminal notices are published.

  KEYS[1] the flight's record (one string: see includes/header.lua)
  KEYS[2] the run's stream (same hash tag)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] read after this entry id ('' = from the first)
  ARGV[3] at most this many entries
  ARGV[4] '1' to mark the record watched

  Returns { 'OK', the record as stored ('' when there is no live record), { id, chunk, id, chunk, ... } }.
]]
--@include common
--@include record

local now = clock_now(ARGV[1])
local count = int_arg(ARGV[3])
if now == nil or count == nil or count < 1 then return bad_input('streamRead arguments') end
local rec = load_live(KEYS[1], now)
if rec ~= nil and ARGV[4] == '1' and is_active(rec) and rec.v[WATCHED] ~= '1' then
  rec.rec = string.sub(rec.rec, 1, 112) .. '1' .. string.sub(rec.rec, 114)
  redis.call('SET', KEYS[1], rec.rec, 'KEEPTTL')
end
local start = '-'
if ARGV[2] ~= '' then start = '(' .. ARGV[2] end
local flat = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], start, '+', 'COUNT', count)) do
  flat[#flat + 1] = entry[1]
  flat[#flat + 1] = entry[2][2]
end
return reply('OK', rec, flat)
