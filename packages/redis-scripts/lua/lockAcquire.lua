#!lua
--[[
  lockAcquire: take a session lock if it is free.

  KEYS[1] lock key
  ARGV[1] holder token   ARGV[2] ttlMs

  Returns 1 when taken, 0 when held by someone else.
]]
--@include common

local ttl = int_arg(ARGV[2])
if ttl == nil or ttl < 1 then return bad_input('lock ttl') end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', fmt(ttl)) then return 1 end
return 0
