package filestore

// Close releases nothing and returns nil: a file store holds no connection
// and no open file, and its mapping of the change index stays while the
// process runs (a Breaker may still read it). It is there so that a file
// store can stand where a store with connections does
// (runtime/storeurl.Store).
func (s *Store) Close() error { return nil }
