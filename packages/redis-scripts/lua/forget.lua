#!lua
--[[
  forget: forget a flight cluster-wide, Go's singleflight.Forget (transitions.ts `forget`; no fence: any
  node may call it). The record's current run becomes forgotten: no new caller joins or replays it (the
  next one starts a new run), its owner is answered FORGOTTEN instead of FENCED, and nothing it completes
  is stored. A stored result is dropped. The record keeps its TTL and epoch. A forget notice
  (`forget <epoch>`) goes to the flight's channel: the nodes that keep an L1 copy of the flight listen there
  (and only they, and the run's waiters, which ignore it).

  KEYS[1] the flight's record (one string: see common.lua)
  KEYS[2] the flight's stale copy (includes/stale.lua), dropped whether or not there is a record
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel

  Returns { 'OK' | 'NOT_FOUND', the record as stored ('' when there is no live record), false }.
]]
--@include common
--@include record
--@include forgotten

local now = clock_now(ARGV[1])
if now == nil then return bad_input('forget arguments') end
if KEYS[2] ~= nil then redis.call('DEL', KEYS[2]) end
local rec = load_live(KEYS[1], now)
if rec == nil then return reply('NOT_FOUND', nil) end
rec.result = ''
update(KEYS[1], rec, { FORGOTTEN, rec.v[EPOCH], RESULT_REF, '' }, now)
if ARGV[2] ~= nil and ARGV[2] ~= '' then redis.call('SPUBLISH', ARGV[2], 'forget ' .. rec.v[EPOCH]) end
return reply('OK', rec)
