package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/redis/go-redis/v9"
)

// Names returns the names of the circuits with a record under the store's
// prefix, for operators' tools. Keys are hashes of the names, so it scans
// the prefix (SCAN, on every master of a cluster or shard of a ring) and
// reads each record. Records that cannot be read are left out and reported
// in the error, one joined error per key, each naming its key; the names of
// the others are returned all the same. Keys under the prefix that are not
// record keys (prefix + 64 hex digits) are not circuits and are skipped.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	keys, err := s.scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("redisstore: scan %s*: %w", s.prefix, err)
	}
	sort.Strings(keys)
	var names []string
	var errs []error
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return names, err
		}
		rec, err := s.readKey(ctx, key)
		switch {
		case err != nil:
			errs = append(errs, err)
		case rec != nil:
			names = append(names, rec.Name)
		}
	}
	return names, errors.Join(errs...)
}

// scanner is a client that can SCAN one server.
type scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
}

// scan returns the record keys under the prefix.
func (s *Store) scan(ctx context.Context) ([]string, error) {
	match := globEscape(s.prefix) + "*"
	var keys []string
	var mu sync.Mutex // ForEachMaster scans the servers concurrently
	each := func(ctx context.Context, c scanner) error {
		iter := c.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			if k := iter.Val(); isRecordKey(k, s.prefix) {
				mu.Lock()
				keys = append(keys, k)
				mu.Unlock()
			}
		}
		return iter.Err()
	}
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return each(ctx, n) })
		return keys, err
	case *redis.Ring:
		err := c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return each(ctx, n) })
		return keys, err
	case scanner:
		return keys, each(ctx, c)
	}
	return nil, fmt.Errorf("a %T cannot scan keys", s.client)
}

// isRecordKey reports whether key is prefix followed by a driver.Key.
func isRecordKey(key, prefix string) bool {
	h, ok := strings.CutPrefix(key, prefix)
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range []byte(h) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// globEscape escapes the characters SCAN's MATCH pattern gives a meaning.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// readKey reads and strictly decodes the record at key, checking that it is
// the record of the circuit it names; nil when the key is gone.
func (s *Store) readKey(ctx context.Context, key string) (*driver.Record, error) {
	rec, _, err := s.load(ctx, key)
	if err == nil && rec != nil && s.Key(rec.Name) != key {
		err = fmt.Errorf("redisstore: record %s: %w: it holds circuit %q", key, driver.ErrCorrupt, rec.Name)
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}
