-- Forget across the cluster (transitions.ts `forget`, `isForgotten`, `endForgotten`), inlined after
-- `--@include record` into the scripts that honour it. The header's forgottenEpoch (FORGOTTEN; 0 = none)
-- holds the epoch of the latest run `forget` was called on; a run whose epoch equals it is forgotten. A new
-- owner's record carries it over, so the forgotten run's owner is still answered FORGOTTEN after a takeover.

-- True when `epoch` is the run `forget` was called on.
local function forgotten_epoch(m, epoch)
  local forgotten = tonumber(m.v[FORGOTTEN]) or 0
  return forgotten ~= 0 and forgotten == epoch
end

-- The end of a forgotten run (complete / fail; ARGV[2] channel, ARGV[3..5] the fence): nothing is stored for
-- later callers. While the record is still that run's it moves to `status` (no result, still forgotten);
-- a newer run's record is left alone. Either way the run's own notice (its nonce and epoch, no result) is
-- published, so its followers ask again at once and join the new run. Published whether or not the record
-- shows listeners (unlike publish_terminal): the forgotten run's waiters may be counted in an older header
-- than the one stored now, and this path is rare. Answers FORGOTTEN.
local function end_forgotten(m, status, ttl, now)
  local epoch = tonumber(ARGV[5])
  if fence_matches(m, ARGV[3], ARGV[4], epoch) and is_active(m) then
    m.result = ''
    update(KEYS[1], m, { STATUS, status, UPDATED, fmt(now), EXPIRE, fmt(now + ttl) }, now)
  end
  redis.call('SPUBLISH', ARGV[2], string.sub(redis.sha1hex(ARGV[4]), 1, 16) .. ' ' .. fmt(epoch) .. ' ' .. status)
  return reply('FORGOTTEN', m)
end
