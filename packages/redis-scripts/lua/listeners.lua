#!lua flags=no-writes
--[[
  listeners: how many connections listen on a flight's notice channel now — the nodes whose followers,
  stream readers or forget listeners wait on the flight. Run on the flight's key so that on a cluster it
  runs on the shard that owns the flight's slot, where its SSUBSCRIBE-d channel lives. Read-only.

  KEYS[1] the flight's record (routes the script; not read)
  ARGV[1] the flight's notice channel

  Returns the number of subscribed connections.
]]
--@include common

local counts = redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[1])
return counts[2]
