#!lua
--[[
  lockRelease: release a session lock only if this token still holds it.

  KEYS[1] lock key
  ARGV[1] holder token

  Returns 1 when released, 0 when the lock was lost (expired or taken by another holder).
]]
--@include common

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
