package redisstore

import "github.com/redis/go-redis/v9"

// loadScript returns the server's TIME, the key's type and, for a hash, its
// fields and values.
//
// KEYS[1] is the record's key.
var loadScript = redis.NewScript(`
local t = redis.call('TIME')
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'hash' then
  return {t[1], t[2], kind}
end
return {t[1], t[2], kind, redis.call('HGETALL', KEYS[1])}
`)

// Results of replaceScript.
const (
	replaced = 1  // next is stored
	conflict = 0  // the stored revision is not prev
	notHash  = -1 // the key holds another type: corrupt
	replayed = 2  // this very write was applied before (a retried script)
)

// replaceScript stores the record given as field/value pairs if the stored
// record is the caller's previous revision.
//
// KEYS[1] is the record's key. ARGV[1] and ARGV[2] are the previous
// incarnation and version ("" and "" for no record), ARGV[3] the write id,
// ARGV[4...] the new record's fields and values.
var replaceScript = redis.NewScript(`
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  if ARGV[1] ~= '' then return 0 end
elseif kind ~= 'hash' then
  return -1
else
  local cur = redis.call('HMGET', KEYS[1], 'incarnation', 'version', 'w')
  if cur[3] == ARGV[3] then return 2 end
  if ARGV[1] == '' or cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then return 0 end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 'w', ARGV[3], unpack(ARGV, 4))
return 1
`)

// deleteScript removes the record, whatever its type.
//
// KEYS[1] is the record's key.
var deleteScript = redis.NewScript(`return redis.call('DEL', KEYS[1])`)
