#!lua
--[[
  streamAppend: appends chunks to the stream of the fenced owner's active run (`executeStream`), refused
  like `complete` to anyone else, within the stream's caps; the stream's TTL is renewed. Then publishes a
  progress notice `nonce epoch RUNNING <bytes> <payload>` on the flight's channel when somebody can be
  listening (see has_listeners_at in header.lua). The payload is the last entry id; when the appended
  chunks total at most ARGV[9] bytes it also carries them, so a listener needs no read:
  `<last id> <id before them, or - for the first> <id> <bytes> <chunk> <id> <bytes> <chunk> ...`.

  KEYS[1] the flight's record (one string: see includes/header.lua)
  KEYS[2] the run's stream (same hash tag; one per epoch). Each entry: c = the chunk, b = the stream's
          bytes of chunks up to and with it.
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] ownerId   ARGV[4] ownerToken   ARGV[5] epoch
  ARGV[6] ttlMs of the stream   ARGV[7] maxChunks   ARGV[8] maxBytes
  ARGV[9] the most chunk bytes a progress notice carries (0: ids only)
  ARGV[10] how many entries the stream holds before these ('' : wherever it ends); another number writes
          nothing and answers POSITION (a command a client sent again after a reconnect appends nothing twice)
  ARGV[11..] the chunks, in order

  Returns { 'OK' | 'FENCED' | 'FORGOTTEN' | 'LIMIT' | 'POSITION', the record as stored ('' when none), last id or false }.
]]
--@include common
--@include record
--@include forgotten

local now = clock_now(ARGV[1])
local epoch, ttl, max_chunks, max_bytes = int_arg(ARGV[5]), int_arg(ARGV[6]), int_arg(ARGV[7]), int_arg(ARGV[8])
local inline_max = int_arg(ARGV[9])
local from = nil
if ARGV[10] ~= '' then from = int_arg(ARGV[10]) end
local FIRST = 11
if (ARGV[10] ~= '' and from == nil) or now == nil or epoch == nil or ttl == nil or ttl < 1 or max_chunks == nil or max_bytes == nil or inline_max == nil or #ARGV < FIRST then
  return bad_input('streamAppend arguments')
end
local rec = load_live(KEYS[1], now)
if rec ~= nil and forgotten_epoch(rec, epoch) then return reply('FORGOTTEN', rec) end
if rec == nil or not fence_matches(rec, ARGV[3], ARGV[4], epoch) or not is_active(rec) then return reply('FENCED', rec) end

local count = redis.call('XLEN', KEYS[2])
if from ~= nil and count ~= from then return reply('POSITION', rec) end
local total = 0
local before = '-'
if count > 0 then
  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  before = last[1][1]
  total = tonumber(last[1][2][4]) or 0
end
local start = total
local bytes = total
for i = FIRST, #ARGV do bytes = bytes + #ARGV[i] end
if count + #ARGV - FIRST + 1 > max_chunks or bytes > max_bytes then return reply('LIMIT', rec) end

local listened = has_listeners_at(rec.rec)
local carry = listened and bytes - start <= inline_max
local parts = {}
local id
for i = FIRST, #ARGV do
  total = total + #ARGV[i]
  id = redis.call('XADD', KEYS[2], '*', 'c', ARGV[i], 'b', fmt(total))
  if carry then parts[#parts + 1] = id .. ' ' .. #ARGV[i] .. ' ' .. ARGV[i] end
end
redis.call('PEXPIRE', KEYS[2], ttl)
if listened then
  local payload = id
  if carry then payload = id .. ' ' .. before .. ' ' .. table.concat(parts, ' ') end
  redis.call('SPUBLISH', ARGV[2], rec.v[NONCE] .. ' ' .. fmt(epoch) .. ' RUNNING ' .. #payload .. ' ' .. payload)
end
return reply('OK', rec, id)
