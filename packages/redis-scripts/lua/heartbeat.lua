#!lua
--[[
  heartbeat: renews a RUNNING owner's lease; past the run deadline the run becomes EXPIRED.
  (transitions.ts `heartbeat`)

  KEYS[1] meta hash   KEYS[2] result string   KEYS[3] event stream
  ARGV[1] now in ms, or '' for the server clock
  ARGV[2] event channel   ARGV[3] flight tag
  ARGV[4] ownerId   ARGV[5] ownerToken   ARGV[6] epoch
  ARGV[7] leaseTtlMs

  Returns { 'OK' | 'FENCED', flat meta (empty when there is no live record), false }.
  Past the deadline: writes EXPIRED, publishes the terminal event and answers FENCED.
]]
--@include common
--@include renew

return renew(false)
