package redisstore

import "github.com/redis/go-redis/v9"

// loadScript returns the server's TIME and the key's value, as one string:
//
//	<seconds> <microseconds> string <value>   a record (or another string)
//	<seconds> <microseconds> none             no record
//	<seconds> <microseconds> <type>           a key of another type: corrupt
//
// One string keeps the reply cheap to build in Redis and to read in Go.
// KEYS[1] is the record's key. ARGV[1] is "1" when the server is also to
// say it is a master (Store.roleDue): a replica (a master demoted since New,
// serving a record it may no longer receive) replies READONLY. A server
// that refuses INFO is not checked so: New reported it when it refused
// ROLE too, and with copies a ROLE each bound checks it (watchServers).
var loadScript = redis.NewScript(`
if ARGV[1] == '1' then
  local info = redis.pcall('INFO', 'replication')
  if type(info) == 'string' and not string.find(info, 'role:master', 1, true) then
    return redis.error_reply('READONLY the server is not a master')
  end
end
local t = redis.call('TIME')
local v = redis.pcall('GET', KEYS[1])
if type(v) == 'string' then return t[1] .. ' ' .. t[2] .. ' string ' .. v end
if not v then return t[1] .. ' ' .. t[2] .. ' none' end
if string.sub(v.err, 1, 9) ~= 'WRONGTYPE' then return v end
return t[1] .. ' ' .. t[2] .. ' ' .. redis.call('TYPE', KEYS[1])['ok']
`)

// Results of replaceScript.
const (
	replaced  = 1  // next is stored
	conflict  = 0  // the stored revision is not prev
	notString = -1 // the key holds another type: corrupt
	replayed  = 2  // this very write was applied before (a retried script)
)

// replaceScript stores the new record's value if the stored record is the
// caller's previous revision. A tombstone (deleteScript) is no record.
//
// KEYS[1] is the record's key. ARGV[1] is the previous revision's prefix
// (revisionPrefix; "" for no record), ARGV[2] the new value, which carries
// a fresh write id: finding exactly it stored means this write was applied
// already.
var replaceScript = redis.NewScript(`
local cur = redis.pcall('GET', KEYS[1])
if type(cur) == 'table' then
  if string.sub(cur.err, 1, 9) == 'WRONGTYPE' then return -1 end
  return cur
end
if cur and cur ~= 'cleared' then
  if cur == ARGV[2] then return 2 end
  if ARGV[1] == '' or string.sub(cur, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
elseif ARGV[1] ~= '' then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`)

// tombstone is the value of a cleared circuit's key: no record, but a key
// all the same, so that a process that saw the circuit's record can tell a
// Clear from the loss of its key (lost.go). It expires after a day
// (tombstoneTTL), by when the circuit's next call has made a record.
const tombstone = "cleared"

// tombstoneTTL is how long a tombstone lasts, in milliseconds.
const tombstoneTTL = 24 * 60 * 60 * 1000

// deleteScript replaces the record, whatever its type, by a tombstone.
//
// KEYS[1] is the record's key; ARGV[1] the tombstone's TTL in milliseconds.
var deleteScript = redis.NewScript(`
redis.call('DEL', KEYS[1])
return redis.call('SET', KEYS[1], 'cleared', 'PX', ARGV[1])
`)
