package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/redis/go-redis/v9"
)

// The window counts of the rate rule live in one hash per circuit and
// window span (WindowKey), under the store's prefix (an ACL scoped to it
// allows them) but outside the prefixes a cached store's invalidation
// connections track (trackedPrefixes): a flush must not send every process
// of the fleet an invalidation. The hash holds the epoch (its incarnation
// hash "ei" and generation "eg") and, per bucket, its calls "c<bucket>" and
// failures "f<bucket>". Each process flushes its counts in batches
// (driver.WindowSharer): one script per flush adds them, drops buckets
// that left the window, and returns the window's sums. The hash expires two
// windows after its last flush: the counts need not outlive a quiet spell.
var _ driver.WindowSharer = (*Store)(nil)

// WindowKey returns the key of the named circuit's window counts of span
// w: the prefix, "window:", the circuit's key and the span in
// milliseconds. A "w" follows the prefix, never a hex digit as in a record
// key, so that invalidation connections do not track it.
func (s *Store) WindowKey(name string, w time.Duration) string {
	return s.prefix + "window:" + driver.Key(name) + ":" + strconv.FormatInt(w.Milliseconds(), 10)
}

// shareScript adds a flush to a window hash and returns its sums.
//
// KEYS[1] is the hash. ARGV: the epoch's incarnation hash and generation,
// the latest bucket, the expiry in milliseconds (two windows), then bucket,
// calls, failures for each bucket flushed. Buckets that left the window by
// the earlier of the server's time and the latest bucket are dropped; counts
// of a bucket ahead of the server's time are not added.
var shareScript = redis.NewScript(`
local ei, eg, b = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
-- Buckets leave the window by the server's time (a bucket ahead, for
-- rounding), not by a process's clock, which may be far ahead.
local t = redis.call('TIME')
local now = math.floor((tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) * 10 / (tonumber(ARGV[4]) / 2)) + 1
local drop = math.min(b, now)
local cur = redis.call('HMGET', KEYS[1], 'ei', 'eg')
local add = true
if cur[1] ~= ei or tonumber(cur[2]) ~= eg then
  if cur[1] == ei and cur[2] and tonumber(cur[2]) > eg then
    add = false
  else
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'ei', ei, 'eg', ARGV[2])
  end
end
if add then
  for i = 5, #ARGV, 3 do
    local bk = tonumber(ARGV[i])
    if bk > drop - 10 and bk <= now then
      redis.call('HINCRBY', KEYS[1], 'c' .. ARGV[i], ARGV[i+1])
      redis.call('HINCRBY', KEYS[1], 'f' .. ARGV[i], ARGV[i+2])
    end
  end
end
local calls, failures = 0, 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local k = all[i]
  local kind = string.sub(k, 1, 1)
  if kind == 'c' or kind == 'f' then
    local bk = tonumber(string.sub(k, 2))
    if bk <= drop - 10 then
      redis.call('HDEL', KEYS[1], k)
    elseif bk <= b then
      if kind == 'c' then calls = calls + tonumber(all[i+1]) else failures = failures + tonumber(all[i+1]) end
    end
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {calls, failures}
`)

// ShareWindow adds a process's flushed window counts to the server's and
// returns the window's sums, in one round trip (driver.WindowSharer).
func (s *Store) ShareWindow(ctx context.Context, name string, w time.Duration, e uint64, b int64, add []driver.BucketCounts) (driver.Counts, error) {
	args := make([]any, 0, 4+3*len(add))
	args = append(args, strconv.FormatUint(e>>32, 10), strconv.FormatUint(e&(1<<32-1), 10),
		strconv.FormatInt(b, 10), strconv.FormatInt(2*w.Milliseconds(), 10))
	for _, c := range add {
		args = append(args, strconv.FormatInt(c.Bucket, 10), strconv.FormatUint(c.Calls, 10), strconv.FormatUint(c.Failures, 10))
	}
	key := s.WindowKey(name, w)
	res, err := s.run(ctx, shareScript, key, args...).Int64Slice()
	if err != nil {
		return driver.Counts{}, fmt.Errorf("redisstore: window %s: %w", key, err)
	}
	if len(res) != 2 || res[0] < 0 || res[1] < 0 {
		return driver.Counts{}, fmt.Errorf("redisstore: window %s: unexpected reply %v", key, res)
	}
	return driver.Counts{Calls: uint64(res[0]), Failures: uint64(res[1])}, nil
}
