#!lua
--[[
  staleRead: a flight's stale copy as stored (includes/stale.lua), for inspection and tests; core never reads
  it this way (acquire offers it).

  KEYS[1] the flight's stale copy

  Returns the copy, or false when there is none.
]]
--@include common

return redis.call('GET', KEYS[1])
