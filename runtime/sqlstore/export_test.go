package sqlstore

// Live reports whether a cached store's listening connection is up.
func (s *Store) Live() bool { return s.cache != nil && s.cache.Live() }

// Cached reports whether the named circuit has a copy.
func (s *Store) Cached(name string) bool {
	return s.cache != nil && s.cache.Entry(name).Copy() != nil
}
