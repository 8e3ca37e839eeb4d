-- A flight's stale copy (transitions.ts `StaleCopy`; `--@include stale`, after `--@include common`): its last
-- stored success, kept past its fresh time in its own key (KEYS[2], the flight's hash tag) while one of its
-- windows lasts. One string: `<epoch> <storedAt> <freshUntil> <revalidateUntil> <errorUntil>\n<result>`.

-- The copy at `key` as `acquire` offers it at `now`: { epoch, ageMs, revalidateForMs, errorForMs, result },
-- or false when there is none that may still be served.
local function stale_offer(key, now)
  local copy = redis.call('GET', key)
  if not copy then return false end
  local nl = string.find(copy, '\n', 1, true)
  if nl == nil then return false end
  local epoch, stored, _, revalidate, err = string.match(string.sub(copy, 1, nl - 1), '^(%d+) (%d+) (%d+) (%d+) (%d+)$')
  if epoch == nil then return false end
  stored, revalidate, err = tonumber(stored), tonumber(revalidate), tonumber(err)
  if math.max(revalidate, err) <= now then return false end
  return { epoch, fmt(now - stored), fmt(revalidate - now), fmt(err - now), string.sub(copy, nl + 1) }
end

-- `complete`'s write of the copy (ARGV[9] whileRevalidateMs, ARGV[10] ifErrorMs, absent when the stage keeps
-- none): the result just stored (ARGV[6]) of run `epoch`, fresh until `fresh_until`; both windows 0 drop it.
local function keep_stale(key, epoch, now, fresh_until, revalidate_ms, error_ms)
  if revalidate_ms == 0 and error_ms == 0 then
    redis.call('DEL', key)
    return
  end
  local revalidate, err = fresh_until + revalidate_ms, fresh_until + error_ms
  local head = string.format('%.0f %.0f %.0f %.0f %.0f\n', epoch, now, fresh_until, revalidate, err)
  redis.call('SET', key, head .. ARGV[6], 'PX', fmt(math.max(1, math.max(revalidate, err) - now)))
end
