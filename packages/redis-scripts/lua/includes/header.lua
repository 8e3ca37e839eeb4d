-- The flight record's layout and the cheap helpers of the hot paths (`--@include header`, after
-- `--@include common`). A script's hot path runs before `--@include record`, whose functions (the full
-- codec and transitions) are then never even created: every top-level `local function` costs a closure
-- per call.
-- A flight is ONE string key: a fixed-width ASCII header, then the text fields as `<bytes>:<value>`, then
-- (once SUCCEEDED) the result, verbatim. One GET reads it, one SET ... PX writes it with its TTL. The hot
-- writes (complete, a follower joining) read and patch the header by position, without decoding the rest.
-- The layout itself (positions, widths, HEADER_FORMAT, `encode_record`) is generated from
-- src/spine/record-layout.ts. Replies carry the record as stored (reply.ts decodes the same layout); stage and
-- requestKey are not stored (they are the flight's ref, which the caller knows).
--@include layout

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
  return string.sub(s, FOLLOWERS_AT, FOLLOWERS_END) ~= '000000' or string.sub(s, WATCHED_AT, WATCHED_END) ~= '0'
end
