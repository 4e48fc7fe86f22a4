//go:build !race || !(amd64 || arm64)

package mapped

// Load atomically loads the word.
func (w *Word) Load() uint64 { return w.v.Load() }

// Store atomically stores v in the word.
func (w *Word) Store(v uint64) { w.v.Store(v) }

// Add atomically adds d to the word and returns the new value.
func (w *Word) Add(d uint64) uint64 { return w.v.Add(d) }

// CompareAndSwap executes the compare-and-swap operation for the word.
func (w *Word) CompareAndSwap(old, new uint64) bool { return w.v.CompareAndSwap(old, new) }

// Or atomically sets the bits of mask in the word and returns its old value.
func (w *Word) Or(mask uint64) (old uint64) { return w.v.Or(mask) }

// And atomically keeps only the bits of mask in the word and returns its
// old value.
func (w *Word) And(mask uint64) (old uint64) { return w.v.And(mask) }
