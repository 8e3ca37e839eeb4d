#!lua
--[[
  heartbeat: renews a RUNNING owner's lease; past the run deadline the run becomes EXPIRED.
  (transitions.ts `heartbeat`)

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] ownerId   ARGV[4] ownerToken   ARGV[5] epoch
  ARGV[6] leaseTtlMs

  Returns { 'OK' | 'FENCED' | 'FORGOTTEN', the record as stored ('' when there is no live record), false }.
  Past the deadline: writes EXPIRED, publishes the terminal notice and answers FENCED.
]]
--@include common
--@include record
--@include forgotten
--@include renew

return renew(false)
