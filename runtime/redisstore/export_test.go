package redisstore

import (
	"context"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// ReplaceWithWriteID is Replace with a chosen write id, for replay tests.
func ReplaceWithWriteID(s *Store, ctx context.Context, name string, prev, next *driver.Record, id string) error {
	return s.bind(name).write(ctx, prev, next, id)
}

// Live reports whether a cached store's invalidation stream is live.
func (s *Store) Live() bool { return s.cache != nil && s.cache.Live() }

// Cached reports whether the named circuit has a copy: of its record, or
// of no record.
func (s *Store) Cached(name string) bool {
	e := s.bind(name).entry
	if e == nil {
		return false
	}
	_, ok := e.Copy()
	return ok
}

// TrackedPrefixes returns the prefixes a cached store under prefix tracks.
func TrackedPrefixes(prefix string) []string { return trackedPrefixes(prefix) }

// RoleEvery is how often a read checks that its server is a master.
const RoleEvery = roleEvery
