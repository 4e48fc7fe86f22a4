package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	rec, now, err := s.load(ctx, key)
	if err == nil && rec != nil && rec.Name != name {
		err = fmt.Errorf("redisstore: record %s: %w: it holds circuit %q", key, circuit.ErrCorrupt, rec.Name)
	}
	if err != nil {
		return nil, now, err
	}
	return rec, now, nil
}

// load runs loadScript on key and decodes its reply: the record (nil when
// there is none) and the server's time.
func (s *Store) load(ctx context.Context, key string) (*circuit.Record, time.Time, error) {
	res, err := loadScript.Run(ctx, s.client, []string{key}).Text()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("redisstore: load %s: %w", key, err)
	}
	now, kind, value, err := parseLoad(res)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("redisstore: load %s: unexpected reply %q", key, res)
	}
	switch kind {
	case "none":
		return nil, now, nil
	case "string":
	default:
		return nil, now, fmt.Errorf("redisstore: record %s: %w: a %s, not a string", key, circuit.ErrCorrupt, kind)
	}
	rec, err := decode(value)
	if err != nil {
		return nil, now, fmt.Errorf("redisstore: record %s: %w: %v", key, circuit.ErrCorrupt, err)
	}
	return rec, now, nil
}

// parseLoad splits loadScript's reply into the server time, the key's type
// and, for a string, its value.
func parseLoad(res string) (now time.Time, kind, value string, err error) {
	sec, rest, ok1 := strings.Cut(res, " ")
	usec, rest, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return time.Time{}, "", "", errBadReply
	}
	s, err1 := strconv.ParseInt(sec, 10, 64)
	u, err2 := strconv.ParseInt(usec, 10, 64)
	if err1 != nil || err2 != nil || u < 0 || u >= 1e6 {
		return time.Time{}, "", "", errBadReply
	}
	kind, value, _ = strings.Cut(rest, " ")
	if kind != "string" && value != "" {
		return time.Time{}, "", "", errBadReply
	}
	return time.Unix(s, u*1000), kind, value, nil
}

var errBadReply = errors.New("unexpected reply")

// Replace stores next as the circuit's record if the stored one is still
// prev, in one script; otherwise it returns circuit.ErrConflict.
func (s *Store) Replace(ctx context.Context, name string, prev, next *circuit.Record) error {
	return s.replace(ctx, name, prev, next, writeID())
}

// replace is Replace with the write id given.
func (s *Store) replace(ctx context.Context, name string, prev, next *circuit.Record, id string) error {
	key := s.Key(name)
	if next == nil || next.Name != name {
		return fmt.Errorf("redisstore: replace %s: the new record must be circuit %q's", key, name)
	}
	value, err := encode(next, id)
	if err != nil {
		return fmt.Errorf("redisstore: replace %s: %w", key, err)
	}
	var rev string
	if prev != nil {
		rev = revisionPrefix(prev)
	}
	n, err := replaceScript.Run(ctx, s.client, []string{key}, rev, value).Int()
	if err != nil {
		return fmt.Errorf("redisstore: replace %s: %w", key, err)
	}
	switch n {
	case replaced, replayed:
		return nil
	case conflict:
		return circuit.ErrConflict
	case notString:
		return fmt.Errorf("redisstore: record %s: %w: not a string", key, circuit.ErrCorrupt)
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
