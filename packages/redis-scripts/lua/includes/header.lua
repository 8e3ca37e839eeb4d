-- The flight record's layout and the cheap helpers of the hot paths (`--@include header`, after
-- `--@include common`). A script's hot path runs before `--@include record`, whose functions (the full
-- codec and transitions) are then never even created: every top-level `local function` costs a closure
-- per call.
-- A flight is ONE string key: a fixed-width ASCII header, then the text fields as `<bytes>:<value>`, then
-- (once SUCCEEDED) the result, verbatim. One GET reads it, one SET ... PX writes it with its TTL. The hot
-- writes (complete, a follower joining) read and patch the header by position, without decoding the rest.
-- Header (1-based positions; numbers zero-padded; times in epoch ms):
--   1 status code (P R S F C E)   2 updatedAt   15 expireAt   28 heartbeatAt   41 deadlineAt   54 createdAt
--   67 epoch (16 digits)   83 result stored '1' | '0'   84 retryable '1' | '0'   85 nonce (16 hex)
--   101 takeovers (6)   107 followers (6)   113 watched '1' | '0' (a waiter that did not join needs the notice)
--   114 forgottenEpoch (16 digits; 0 = none): the epoch of the latest run `forget` was called on (forgotten.lua)
-- Text fields from 130: ownerId, ownerToken, sessionId, errorType, errorCode, errorMessage, traceparent.
-- Replies carry the record as stored (reply.ts decodes the same layout); stage and requestKey are not
-- stored (they are the flight's ref, which the caller knows).
local HEADER_BYTES = 129
-- The largest time a header holds (13 digits: the year 2286); later times are clamped to it.
local MAX_TIME = 9999999999999
-- status code, updatedAt, expireAt, heartbeatAt, deadlineAt, createdAt, epoch, result flag, retryable,
-- nonce, takeovers, followers, watched, forgottenEpoch. The status code is the status's first letter.
local HEADER_FORMAT = '%.1s%013.0f%013.0f%013.0f%013.0f%013.0f%016.0f%s%s%-16.16s%06.0f%06.0f%s%016.0f'

local function time_at(n)
  if n > MAX_TIME then return MAX_TIME end
  return n
end

-- A text field at `i`: its value and the position after it; nil when malformed.
local function text_field(s, i)
  local j = string.find(s, ':', i, true)
  if j == nil then return nil end
  local n = tonumber(string.sub(s, i, j - 1))
  if n == nil then return nil end
  return string.sub(s, j + 1, j + n), j + n + 1
end

-- Whether a terminal notice of the record `s` can reach anyone: a caller joined this run (followers), or
-- a waiter that did not join asked for it (watched; carried over to the next run, whose notice also
-- wakes it).
local function has_listeners_at(s)
  return string.sub(s, 107, 113) ~= '0000000'
end
