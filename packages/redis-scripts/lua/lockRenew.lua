#!lua
--[[
  lockRenew: extend a session lock only if this token still holds it.

  KEYS[1] lock key
  ARGV[1] holder token   ARGV[2] ttlMs

  Returns 1 when extended, 0 when the lock was lost.
]]
--@include common

local ttl = int_arg(ARGV[2])
if ttl == nil or ttl < 1 then return bad_input('lock ttl') end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], fmt(ttl))
  return 1
end
return 0
