package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is a conventional key prefix: records are then
// "circuitgen:circuit:<sha256 of the name>".
const DefaultPrefix = "circuitgen:circuit:"

// Store is a circuit.Store on Redis. It is safe for concurrent use; Breakers
// on the same server and prefix share every circuit.
type Store struct {
	client redis.Scripter
	prefix string
}

var _ circuit.Store = (*Store)(nil)

// New returns a store that keeps each circuit's record at prefix +
// circuit.Key(name) through client, a *redis.Client, *redis.ClusterClient or
// *redis.Ring. The prefix is used verbatim (DefaultPrefix is a good one);
// stores with different prefixes on one server are separate. New does no I/O.
func New(client redis.Scripter, prefix string) *Store {
	return &Store{client: client, prefix: prefix}
}

// Key returns the Redis key of the named circuit's record.
func (s *Store) Key(name string) string { return s.prefix + circuit.Key(name) }

// Load returns the circuit's record, or nil when it has none, and the Redis
// server's time, read in the same script.
func (s *Store) Load(ctx context.Context, name string) (*circuit.Record, time.Time, error) {
	key := s.Key(name)
	res, err := loadScript.Run(ctx, s.client, []string{key}).Slice()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("redisstore: load %s: %w", key, err)
	}
	now, kind, h, err := parseLoad(res)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("redisstore: load %s: unexpected reply: %w", key, err)
	}
	switch kind {
	case "none":
		return nil, now, nil
	case "hash":
	default:
		return nil, now, fmt.Errorf("redisstore: record %s: %w: a %s, not a hash", key, circuit.ErrCorrupt, kind)
	}
	rec, err := decode(h)
	if err == nil && rec.Name != name {
		err = fmt.Errorf("it holds circuit %q", rec.Name)
	}
	if err != nil {
		return nil, now, fmt.Errorf("redisstore: record %s: %w: %v", key, circuit.ErrCorrupt, err)
	}
	return rec, now, nil
}

// parseLoad splits loadScript's reply into the server time, the key's type
// and, for a hash, its fields.
func parseLoad(res []any) (time.Time, string, map[string]string, error) {
	if len(res) < 3 {
		return time.Time{}, "", nil, fmt.Errorf("%d elements", len(res))
	}
	sec, err1 := strconv.ParseInt(fmt.Sprint(res[0]), 10, 64)
	usec, err2 := strconv.ParseInt(fmt.Sprint(res[1]), 10, 64)
	kind, ok := res[2].(string)
	if err := errors.Join(err1, err2); err != nil || !ok {
		return time.Time{}, "", nil, fmt.Errorf("bad time or type: %v", res)
	}
	now := time.Unix(sec, usec*1000)
	if kind != "hash" {
		return now, kind, nil, nil
	}
	if len(res) != 4 {
		return time.Time{}, "", nil, fmt.Errorf("%d elements for a hash", len(res))
	}
	flat, ok := res[3].([]any)
	if !ok || len(flat)%2 != 0 {
		return time.Time{}, "", nil, fmt.Errorf("bad hash reply %T", res[3])
	}
	h := make(map[string]string, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		k, ok1 := flat[i].(string)
		v, ok2 := flat[i+1].(string)
		if !ok1 || !ok2 {
			return time.Time{}, "", nil, fmt.Errorf("bad hash entry")
		}
		h[k] = v
	}
	return now, kind, h, nil
}

// Replace stores next as the circuit's record if the stored one is still
// prev, in one script; otherwise it returns circuit.ErrConflict.
func (s *Store) Replace(ctx context.Context, name string, prev, next *circuit.Record) error {
	return s.replace(ctx, name, prev, next, writeID())
}

// replace is Replace with the write id given.
func (s *Store) replace(ctx context.Context, name string, prev, next *circuit.Record, id string) error {
	key := s.Key(name)
	args := make([]any, 0, 3+2*len(fields))
	if prev == nil {
		args = append(args, "", "")
	} else {
		args = append(args, prev.Incarnation, strconv.FormatUint(prev.Version, 10))
	}
	args = append(args, id)
	args = append(args, encode(next)...)
	n, err := replaceScript.Run(ctx, s.client, []string{key}, args...).Int()
	if err != nil {
		return fmt.Errorf("redisstore: replace %s: %w", key, err)
	}
	switch n {
	case replaced, replayed:
		return nil
	case conflict:
		return circuit.ErrConflict
	case notHash:
		return fmt.Errorf("redisstore: record %s: %w: not a hash", key, circuit.ErrCorrupt)
	}
	return fmt.Errorf("redisstore: replace %s: unexpected reply %d", key, n)
}

// Delete removes the circuit's record, even a corrupt one.
func (s *Store) Delete(ctx context.Context, name string) error {
	key := s.Key(name)
	if err := deleteScript.Run(ctx, s.client, []string{key}).Err(); err != nil {
		return fmt.Errorf("redisstore: delete %s: %w", key, err)
	}
	return nil
}

// writeID returns a random id that marks one Replace's write.
func writeID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
