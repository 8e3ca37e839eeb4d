-- Lease renewal shared by markRunning and heartbeat (transitions.ts `renew`).
-- ARGV[1] now   ARGV[2] channel   ARGV[3] ownerId   ARGV[4] ownerToken   ARGV[5] epoch   ARGV[6] leaseTtlMs
-- ARGV[7] '1' to restamp (markRunning only): the confirmation of a run the fast acquire created by a SET that
-- ran late (coordinator.ts). A run nobody joined, watched or took over yet also gets its epoch from this
-- server's clock, so it is above every earlier run's of the key even if the late SET's was not.
local function renew(allow_pending)
  local now = clock_now(ARGV[1])
  local epoch = int_arg(ARGV[5])
  local lease_ttl = int_arg(ARGV[6])
  if now == nil or epoch == nil or lease_ttl == nil then return bad_input('renew arguments') end
  local rec = load_live(KEYS[1], now)
  if rec ~= nil and forgotten_epoch(rec, epoch) then return reply('FORGOTTEN', rec) end
  if rec == nil or not fence_matches(rec, ARGV[3], ARGV[4], epoch) or not is_active(rec) then
    return reply('FENCED', rec)
  end
  if rec.status == 'PENDING' and not allow_pending then return reply('FENCED', rec) end
  local at = fmt(now)
  local expire_at = fmt(now + lease_ttl)
  if now >= rec.deadlineAt then
    update(KEYS[1], rec, { STATUS, 'EXPIRED', UPDATED, at, EXPIRE, expire_at }, now)
    publish_terminal(ARGV[2], rec.v)
    return reply('FENCED', rec)
  end
  local changes = { STATUS, 'RUNNING', HEARTBEAT, at, UPDATED, at, EXPIRE, expire_at }
  if allow_pending and ARGV[7] == '1' and not has_listeners_at(rec.rec) and (tonumber(rec.v[TAKEOVERS]) or 0) == 0 then
    changes[#changes + 1] = EPOCH
    changes[#changes + 1] = fmt(math.max(epoch, now * 1000))
  end
  update(KEYS[1], rec, changes, now)
  return reply('OK', rec)
end
