--[[
  probe: the server's version, checked once when a coordinator starts. No `#!lua` line on purpose: it
  must load on any server, so an older one is told apart from a broken one.

  KEYS[1] none (routed to any node)
  Returns the server version ('7.0.15'), or '' before 7.0 (no redis.REDIS_VERSION there).
]]
--@include common

return redis.REDIS_VERSION or ''
