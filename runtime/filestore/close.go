package filestore

// Close releases nothing and returns nil: a file store holds no connection,
// and what it maps is shared by every Store of the process. It is there so
// that a file store can stand where a store with connections does
// (runtime/storeurl.Store).
func (s *Store) Close() error { return nil }
