//go:build linux

package filestore

// Security review, as tests. filestore_test.go's TestRefuse and
// TestSymlinkedLockRefusedForProbe cover a symlinked state directory, record
// and lock and a group- or other-writable directory; TestPermissions covers
// the modes after a first failure under three umasks. These cover the rest:
// hostile names never reach the filesystem, modes over a whole life cycle
// and nested directories, files an attacker with the owner's rights might
// plant (a temporary file, the index, a FIFO, a hard link), and a lock file
// with loose permissions.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

const secCircuit = "vault-api"

var secPolicy = circuit.Policy{FailureThreshold: 1, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

var errVault = errors.New("vault down")

func TestHostileNamesRejectedBeforeIO(t *testing.T) {
	names := []string{
		"",
		"../etc/passwd",
		"a/../../b",
		"billing/api",
		"billing\x00api",
		"billing-api\x00",
		"b\u0456lling-api",         // Cyrillic і
		"billing-api\u202egpj.exe", // right-to-left override
		"billing\u200d-api",        // zero-width joiner
		"ｂilling-api",              // fullwidth b
		"billing-api\n",            // a newline for a log line
		"billing api",              // space
		"https://billing.example",  // a URL
		"1billing",                 // a leading digit
		".hidden",                  // a leading dot
		"-flag",                    // a leading dash
		"a" + strings.Repeat("b", driver.MaxNameLen), // 129 bytes
		"\xff\xfe", // not UTF-8
	}
	for _, n := range names {
		dir := filepath.Join(t.TempDir(), "parent", "state")
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		b := circuit.New(s)
		ctx := context.Background()
		var ran bool
		op := func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil }
		_, snapErr := b.Snapshot(ctx, n)
		_, allowErr := b.Allow(ctx, n, secPolicy)
		_, callErr := circuit.Call(ctx, b, n, secPolicy, func(int, error) circuit.Outcome { return circuit.Success },
			func(context.Context) (int, error) { ran = true; return 0, nil })
		for what, err := range map[string]error{
			"Run":      b.Run(ctx, n, secPolicy, op),
			"Allow":    allowErr,
			"Call":     callErr,
			"Snapshot": snapErr,
			"Clear":    b.Clear(ctx, n),
		} {
			var ce *circuit.ConfigError
			if !errors.As(err, &ce) || ce.Field != "name" {
				t.Errorf("%s(%q) = %v, want a *circuit.ConfigError for the name", what, n, err)
			}
		}
		if ran {
			t.Errorf("the operation ran for the name %q", n)
		}
		if _, err := os.Lstat(filepath.Dir(dir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("name %q: the state directory's parent exists after the calls (%v): I/O before validation", n, err)
		}
	}
	if len("a"+strings.Repeat("b", driver.MaxNameLen)) != 129 {
		t.Fatal("the long name is not 129 bytes")
	}
}

// TestModesOverALifeCycle checks that every directory the store creates is
// 0700 and every file 0600, whatever the umask, over a circuit's whole life:
// created, opened, probed, closed, cleared, created again, in a state
// directory whose parents do not exist yet.
func TestModesOverALifeCycle(t *testing.T) {
	for _, umask := range []int{0, 0o022, 0o077} {
		t.Run(fmt.Sprintf("Umask%04o", umask), func(t *testing.T) {
			old := syscall.Umask(umask)
			defer syscall.Umask(old)
			root := t.TempDir()
			dir := filepath.Join(root, "a", "b", "state")
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			clk := &faultClock{now: faultBase}
			b := circuit.New(s, circuit.WithClock(clk.Now))
			ctx := t.Context()
			fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errVault }
			succeed := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
			if err := b.Run(ctx, secCircuit, secPolicy, fail); err != errVault {
				t.Fatal(err)
			}
			clk.now = clk.now.Add(secPolicy.Cooldown)
			if err := b.Run(ctx, secCircuit, secPolicy, succeed); err != nil {
				t.Fatal(err)
			}
			if err := b.Clear(ctx, secCircuit); err != nil {
				t.Fatal(err)
			}
			if err := b.Clear(ctx, "never-used"); err != nil { // creates only a lock
				t.Fatal(err)
			}
			if err := b.Run(ctx, secCircuit, secPolicy, succeed); err != nil {
				t.Fatal(err)
			}
			err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil || path == root {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(root, path)
				switch {
				case fi.IsDir() && fi.Mode().Perm() != 0o700:
					t.Errorf("directory %s: mode %v, want 0700", rel, fi.Mode().Perm())
				case fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600:
					t.Errorf("file %s: mode %v, want 0600", rel, fi.Mode().Perm())
				case !fi.IsDir() && !fi.Mode().IsRegular():
					t.Errorf("%s: unexpected %v", rel, fi.Mode())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestLooseLockFileTightened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, circuit.Key(secCircuit)+".lock")
	if err := os.WriteFile(lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(lock, 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := circuit.New(s).Clear(t.Context(), secCircuit); err != nil { // a write: a closed record
		t.Fatal(err)
	}
	if fi, err := os.Stat(lock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file after a write: %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

// secSetup returns a state directory holding a closed record of
// secCircuit, and an outside file with known contents.
func secSetup(t *testing.T) (dir, outside string, content []byte) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := circuit.New(s).Clear(t.Context(), secCircuit); err != nil { // a write: a closed record
		t.Fatal(err)
	}
	outside = filepath.Join(t.TempDir(), "victim")
	content = []byte("not the store's to touch\n")
	if err := os.WriteFile(outside, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, outside, content
}

func secUnchanged(t *testing.T, outside string, content []byte) {
	t.Helper()
	got, err := os.ReadFile(outside)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the outside file was changed: %q (%v)", got, err)
	}
}

// TestPlantedFilesNotFollowed plants files where the store writes: a
// symlink named like a temporary record (the sweep removes the link, not its
// target), a hard link as the record (replaced by rename, never written in
// place), and the change index as a symlink (not mapped, so never written
// through).
func TestPlantedFilesNotFollowed(t *testing.T) {
	failOnce := func(t *testing.T, dir string) {
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		b := circuit.New(s)
		if err := b.Run(t.Context(), secCircuit, secPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errVault }); err != errVault {
			t.Fatalf("Run = %v, want the operation's error", err)
		}
		if snap, err := b.Snapshot(t.Context(), secCircuit); err != nil || snap.State != circuit.StateOpen {
			t.Fatalf("Snapshot = %+v, %v; want open", snap, err)
		}
	}
	t.Run("TempSymlink", func(t *testing.T) {
		dir, outside, content := secSetup(t)
		link := filepath.Join(dir, circuit.Key(secCircuit)+".json.tmp-next")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		failOnce(t, dir)
		secUnchanged(t, outside, content)
		if _, err := os.Lstat(link); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the planted temporary link survived a write: %v", err)
		}
	})
	t.Run("HardLinkedRecord", func(t *testing.T) {
		dir, outside, _ := secSetup(t)
		record := filepath.Join(dir, circuit.Key(secCircuit)+".json")
		content, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(outside); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(record, outside); err != nil {
			t.Fatal(err)
		}
		failOnce(t, dir)
		secUnchanged(t, outside, content)
	})
	t.Run("SymlinkedIndex", func(t *testing.T) {
		dir, _, _ := secSetup(t)
		index := filepath.Join(dir, indexName)
		data, err := os.ReadFile(index)
		if err != nil {
			t.Fatal(err)
		}
		outside := filepath.Join(t.TempDir(), "index")
		if err := os.WriteFile(outside, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(index); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, index); err != nil {
			t.Fatal(err)
		}
		// The first call finds the index damaged, replaces it (the link,
		// not what it points to) and fails closed; then calls work.
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = circuit.New(s).Snapshot(t.Context(), secCircuit)
		if se := (*circuit.StateError)(nil); !errors.As(err, &se) || !strings.Contains(err.Error(), "damaged (a symlink)") {
			t.Fatalf("Snapshot with a symlinked index: %v, want a StateError saying it is damaged", err)
		}
		failOnce(t, dir)
		secUnchanged(t, outside, data)
	})
}

// TestPlantedFIFOsDoNotBlock plants a FIFO where the store reads a file:
// opening one for reading would block until a writer came. Every reader
// must refuse (or ignore) it at once, and the record's readers report it.
func TestPlantedFIFOsDoNotBlock(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		refused    bool // calls report a StateError; else they work
	}{
		{"Record", circuit.Key(secCircuit) + ".json", true},
		{"Index", indexName, false}, // replaced by the first call, which fails closed
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(dir, tt.file), 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			b := circuit.New(s)
			calls := []struct {
				what string
				call func() error
			}{
				{"Run", func() error {
					return b.Run(t.Context(), secCircuit, secPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errVault })
				}},
				{"Snapshot", func() error { _, err := b.Snapshot(t.Context(), secCircuit); return err }},
				{"Names", func() error { _, err := s.Names(t.Context()); return err }},
			}
			for i, c := range calls {
				done := make(chan error, 1)
				go func() { done <- c.call() }()
				select {
				case err := <-done:
					if i == 0 && tt.file == indexName {
						if se := (*circuit.StateError)(nil); !errors.As(err, &se) || !strings.Contains(err.Error(), "damaged") {
							t.Errorf("%s with a FIFO as the index: %v, want a StateError saying it is damaged", c.what, err)
						}
						if err := b.Run(t.Context(), secCircuit, secPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errVault }); err != errVault {
							t.Errorf("Run after the FIFO index was replaced: %v, want the operation's error", err)
						}
						continue
					}
					if c.what == "Run" && !tt.refused && err != errVault {
						t.Errorf("%s with a FIFO as %s: %v, want the operation's error", c.what, tt.file, err)
					}
					if tt.refused && (err == nil || errors.Is(err, errVault)) {
						t.Errorf("%s over a FIFO record: %v, want it refused", c.what, err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%s with a FIFO as %s blocked for 5s", c.what, tt.file)
				}
			}
		})
	}
}
