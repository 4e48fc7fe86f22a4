//go:build linux || darwin

package mapped

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"unsafe"
)

// TestOperations: each operation does what sync/atomic's does, from
// goroutines at once.
func TestOperations(t *testing.T) {
	var w Word
	if w.Load() != 0 {
		t.Fatal("zero Word is not 0")
	}
	w.Store(5)
	if got := w.Add(3); got != 8 {
		t.Fatalf("Add(3) after Store(5) = %d, want 8", got)
	}
	if w.CompareAndSwap(7, 1) || w.Load() != 8 {
		t.Fatalf("CompareAndSwap(7, 1) on 8 swapped: %d", w.Load())
	}
	if !w.CompareAndSwap(8, 1) || w.Load() != 1 {
		t.Fatalf("CompareAndSwap(8, 1) on 8 did not swap: %d", w.Load())
	}
	if old := w.Or(0b110); old != 1 || w.Load() != 0b111 {
		t.Fatalf("Or(0b110) on 1 = %d, leaving %b", old, w.Load())
	}
	if old := w.And(0b101); old != 0b111 || w.Load() != 0b101 {
		t.Fatalf("And(0b101) on 0b111 = %d, leaving %b", old, w.Load())
	}
	w.Store(1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				w.Add(1)
				for v := w.Load(); !w.CompareAndSwap(v, v+1); v = w.Load() {
				}
			}
		})
	}
	wg.Wait()
	if got := w.Load(); got != 1+4*2000 {
		t.Fatalf("after 8,000 concurrent increments from 1: %d", got)
	}
	var bits Word
	for g := range 4 {
		wg.Go(func() {
			for i := range 16 {
				bits.Or(1 << (16*g + i))
			}
			for i := range 8 {
				bits.And(^uint64(1 << (16*g + 2*i)))
			}
		})
	}
	wg.Wait()
	if got := bits.Load(); got != 0xaaaaaaaaaaaaaaaa {
		t.Fatalf("after concurrent Or and And of bits of their own: %x", got)
	}
}

// TestFaultIsPanic: an operation on a word of a mapped file truncated
// under the process is a panic that debug.SetPanicOnFault lets the caller
// recover, in a race-detector build too. (That sync/atomic's operations
// under the race detector kill the process when the truncation falls
// between their two touches of the word is a race no test can time; the
// file store's TestIndexTruncatedUnderRunningProcess saw it in 3 of 60
// runs.)
func TestFaultIsPanic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "words")
	if err := os.WriteFile(path, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, 8192, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(data)
	w := (*Word)(unsafe.Pointer(&data[4096]))
	w.Store(42)
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	for _, op := range []struct {
		name string
		do   func()
	}{
		{"Load", func() { w.Load() }},
		{"Store", func() { w.Store(1) }},
		{"Add", func() { w.Add(1) }},
		{"CompareAndSwap", func() { w.CompareAndSwap(42, 1) }},
		{"Or", func() { w.Or(1) }},
		{"And", func() { w.And(1) }},
	} {
		if !faults(op.do) {
			t.Errorf("%s on a truncated mapping did not fault", op.name)
		}
	}
}

// faults reports whether do faulted, with faults turned into panics.
func faults(do func()) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	do()
	return false
}
