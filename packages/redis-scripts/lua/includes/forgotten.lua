-- Forget across the cluster (transitions.ts `forget`, `isForgotten`, `endForgotten`), inlined after
-- `--@include record` into the scripts that honour it. Field 21 of the record holds the epoch of the latest
-- run `forget` was called on; a record whose epoch equals it is forgotten.
local FORGOTTEN = 21

-- True when `epoch` is the run `forget` was called on.
local function forgotten_epoch(m, epoch)
  return m.v[FORGOTTEN] ~= '' and tonumber(m.v[FORGOTTEN]) == epoch
end

-- The end of a forgotten run (complete / fail; ARGV[2] channel, ARGV[3..5] the fence): nothing is stored for
-- later callers. While the record is still that run's it moves to `status` (no result, still forgotten);
-- a newer run's record is left alone. Either way the run's own notice (its nonce and epoch, no result) is
-- published, so its followers ask again at once. Answers FORGOTTEN.
local function end_forgotten(m, status, ttl, now)
  local epoch = tonumber(ARGV[5])
  if fence_matches(m, ARGV[3], ARGV[4], epoch) and is_active(m) then
    m.result = ''
    update(KEYS[1], m, { STATUS, status, UPDATED, fmt(now), EXPIRE, fmt(now + ttl) }, now)
  end
  redis.call('SPUBLISH', ARGV[2], string.sub(redis.sha1hex(ARGV[4]), 1, 16) .. ' ' .. fmt(epoch) .. ' ' .. status)
  return reply('FORGOTTEN', m)
end
