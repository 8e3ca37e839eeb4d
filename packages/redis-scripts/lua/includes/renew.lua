-- Lease renewal shared by markRunning and heartbeat (transitions.ts `renew`).
local function renew(allow_pending)
  local now = clock_now(ARGV[1])
  local epoch = int_arg(ARGV[6])
  local lease_ttl = int_arg(ARGV[7])
  if now == nil or epoch == nil or lease_ttl == nil then return bad_input('renew arguments') end
  local rec = load_live(KEYS[1], now)
  if rec == nil or not fence_matches(rec, ARGV[4], ARGV[5], epoch) or not is_active(rec) then
    return reply('FENCED', rec)
  end
  if rec.status == 'PENDING' and not allow_pending then return reply('FENCED', rec) end
  local m = rec
  if now >= rec.deadlineAt then
    update(KEYS[1], m, { 'status', 'EXPIRED', 'updatedAt', fmt(now), 'expireAt', fmt(now + lease_ttl) }, now)
    publish_terminal(KEYS[3], ARGV[2], ARGV[3], m, now)
    return reply('FENCED', m)
  end
  local at = fmt(now)
  update(KEYS[1], m, { 'status', 'RUNNING', 'heartbeatAt', at, 'updatedAt', at, 'expireAt', fmt(now + lease_ttl) }, now)
  return reply('OK', m)
end
