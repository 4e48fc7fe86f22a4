//go:build race && (amd64 || arm64)

package mapped

import "unsafe"

// Load atomically loads the word.
func (w *Word) Load() uint64 { return load(w.p()) }

// Store atomically stores v in the word.
func (w *Word) Store(v uint64) { store(w.p(), v) }

// Add atomically adds d to the word and returns the new value.
func (w *Word) Add(d uint64) uint64 { return add(w.p(), d) }

// CompareAndSwap executes the compare-and-swap operation for the word.
func (w *Word) CompareAndSwap(old, new uint64) bool { return cas(w.p(), old, new) }

// Or atomically sets the bits of mask in the word and returns its old value.
func (w *Word) Or(mask uint64) (old uint64) { return or(w.p(), mask) }

// And atomically keeps only the bits of mask in the word and returns its
// old value.
func (w *Word) And(mask uint64) (old uint64) { return and(w.p(), mask) }

func (w *Word) p() *uint64 { return (*uint64)(unsafe.Pointer(&w.v)) }

// Implemented in word_race_$GOARCH.s.

//go:noescape
func load(p *uint64) uint64

//go:noescape
func store(p *uint64, v uint64)

//go:noescape
func add(p *uint64, d uint64) uint64

//go:noescape
func cas(p *uint64, old, new uint64) bool

//go:noescape
func or(p *uint64, mask uint64) uint64

//go:noescape
func and(p *uint64, mask uint64) uint64
