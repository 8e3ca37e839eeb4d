#!lua
--[[
  compareAndSet: `SET key value PX ttl IFEQ expected` for a server that lacks the condition (Redis < 8.4,
  Valkey < 8.1): the untouched complete's write (untouched-complete.ts), as one small script instead of
  the complete script. It reads and compares one string and writes one: most of its cost is the floor of
  any script that does that (bench/profiles/redis.md).

  KEYS[1] the flight's record
  ARGV[1] the value it must hold (compared byte for byte; a missing key holds nothing)
  ARGV[2] the value to write   ARGV[3] its TTL in ms

  Returns 1 when it wrote, 0 when the key held anything else (nothing written).
]]
--@include common

local ttl = int_arg(ARGV[3])
if ttl == nil or ttl < 1 then return bad_input('compareAndSet arguments') end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
