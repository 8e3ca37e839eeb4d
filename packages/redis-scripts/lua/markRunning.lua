#!lua
--[[
  markRunning: PENDING → RUNNING for the fenced owner (idempotent while RUNNING); renews the lease.
  (transitions.ts `markRunning`)

  KEYS[1] the flight's record (one string: see includes/header.lua)
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] the flight's notice channel
  ARGV[3] ownerId   ARGV[4] ownerToken   ARGV[5] epoch
  ARGV[6] leaseTtlMs
  ARGV[7] '1' to restamp a run the fast acquire created late (see includes/renew.lua), else absent

  Returns { 'OK' | 'FENCED' | 'FORGOTTEN', the record as stored ('' when there is no live record), false }.
  Past the deadline: writes EXPIRED, publishes the terminal notice and answers FENCED.
]]
--@include common
--@include record
--@include forgotten
--@include renew

return renew(true)
