#!lua
--[[
  complete: store the result, move to SUCCEEDED and publish the terminal notice, in one step
  (transitions.ts `complete`). Idempotent for the same fence.

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] ownerId   ARGV[4] ownerToken   ARGV[5] epoch
  ARGV[6] result   ARGV[7] resultTtlMs
  ARGV[8] inlineResultBytes (optional, default 0): a result of at most this many bytes rides in the notice
  ARGV[9] whileRevalidateMs, ARGV[10] ifErrorMs (optional): the stored result also replaces the flight's stale
  copy, KEYS[2] (both 0: the copy is dropped; see includes/stale.lua); absent, the copy is left alone

  Returns { 'OK' | 'FENCED' | 'FORGOTTEN', the record as stored ('' when there is no live record), false, or
  'unchanged' on an OK that wrote nothing (the run was SUCCEEDED already) }.
]]
--@include common
--@include header
--@include stale

local now = clock_now(ARGV[1])
local epoch = int_arg(ARGV[5])
local ttl = int_arg(ARGV[7])
local inline_max = 0
if ARGV[8] ~= nil and ARGV[8] ~= '' then inline_max = int_arg(ARGV[8]) end
local revalidate_ms, error_ms = nil, nil
if ARGV[9] ~= nil then
  revalidate_ms, error_ms = int_arg(ARGV[9]), int_arg(ARGV[10])
  if revalidate_ms == nil or error_ms == nil or KEYS[2] == nil then return bad_input('complete stale windows') end
end
if now == nil or epoch == nil or ttl == nil or ttl < 1 or inline_max == nil or now > MAX_TIME then
  return bad_input('complete arguments')
end
local inline = nil
if #ARGV[6] <= inline_max then inline = ARGV[6] end

-- The common case, read and patched by position: a live active run of this fence, not forgotten (header
-- forgottenEpoch other than its epoch), becomes SUCCEEDED (status, updatedAt, expireAt, result flag), the
-- rest of the record kept byte for byte.
local s = redis.call('GET', KEYS[1])
if s and #s >= HEADER_BYTES then
  local code = string.sub(s, STATUS_AT, STATUS_END)
  local expire_at, at_epoch = tonumber(string.sub(s, EXPIRE_AT, EXPIRE_END)), tonumber(string.sub(s, EPOCH_AT, EPOCH_END))
  if (code == 'R' or code == 'P') and expire_at ~= nil and expire_at > now and at_epoch == epoch
    and tonumber(string.sub(s, FORGOTTEN_AT, FORGOTTEN_END)) ~= epoch then
    local owner, i = text_field(s, HEADER_BYTES + 1)
    if owner == ARGV[3] and text_field(s, i) == ARGV[4] then
      expire_at = time_at(now + ttl)
      -- The header leads with status, updatedAt and expireAt (src/spine/record-layout.ts).
      local rec = string.format('S%013.0f%013.0f', now, expire_at) .. string.sub(s, EXPIRE_END + 1, RESULT_REF_AT - 1) .. '1'
        .. string.sub(s, RESULT_REF_END + 1)
      local px = ARGV[7]
      if expire_at < now + ttl then px = fmt(math.max(1, expire_at - now)) end
      redis.call('SET', KEYS[1], rec .. ARGV[6], 'PX', px)
      if revalidate_ms ~= nil then keep_stale(KEYS[2], epoch, now, expire_at, revalidate_ms, error_ms) end
      if has_listeners_at(s) then
        local notice = string.sub(s, NONCE_AT, NONCE_END) .. ' ' .. fmt(epoch) .. ' SUCCEEDED'
        if inline ~= nil then notice = notice .. ' ' .. #inline .. ' ' .. inline end
        redis.call('SPUBLISH', ARGV[2], notice)
      end
      return { 'OK', rec, false }
    end
  end
end

-- Every other case (forgotten, fenced, already SUCCEEDED, not live), by the full rules.
--@include record
--@include forgotten
local rec = load_live(KEYS[1], now, s or false)
if rec ~= nil and forgotten_epoch(rec, epoch) then return end_forgotten(rec, 'SUCCEEDED', ttl, now) end
if rec == nil or not fence_matches(rec, ARGV[3], ARGV[4], epoch) then return reply('FENCED', rec) end
-- Already stored (a repeat of this write): its updatedAt is the first write's time, not now.
if rec.status == 'SUCCEEDED' then return reply('OK', rec, 'unchanged') end
if not is_active(rec) then return reply('FENCED', rec) end
-- The record and its result, in one write.
rec.result = ARGV[6]
update(KEYS[1], rec, { STATUS, 'SUCCEEDED', UPDATED, fmt(now), EXPIRE, fmt(now + ttl), RESULT_REF, 'result' }, now)
if revalidate_ms ~= nil then keep_stale(KEYS[2], epoch, now, tonumber(rec.v[EXPIRE]), revalidate_ms, error_ms) end
publish_terminal(ARGV[2], rec.v, inline)
return reply('OK', rec)
