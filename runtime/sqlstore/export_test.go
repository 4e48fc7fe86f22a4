package sqlstore

// Live reports whether a cached store's listening connection is up.
func (s *Store) Live() bool { return s.cache != nil && s.cache.Live() }

// Cached reports whether the named circuit has a copy: of its record, or
// of no record.
func (s *Store) Cached(name string) bool {
	if s.cache == nil {
		return false
	}
	_, ok := s.cache.Entry(name).Copy()
	return ok
}
