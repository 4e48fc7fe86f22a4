//go:build linux

package filestore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

func init() {
	// opendir: Open on envDir; says "ok", "direrror <message>" or
	// "other <message>".
	helperScripts["opendir"] = func() error {
		_, err := Open(os.Getenv(envDir))
		var de *DirError
		switch {
		case err == nil:
			say("ok")
		case errors.As(err, &de):
			say("direrror %s", err)
		default:
			say("other %s", err)
		}
		return nil
	}
}

// tree lists every path under root with its mode, to tell that Open made
// or changed nothing.
func tree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(root, func(p string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		lines = append(lines, p+" "+fi.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestOpenVerifiesDirectory: Open refuses a state directory the store could
// not use, with a *DirError naming what is wrong and the fix, and accepts
// one it can use or create; either way it creates and changes nothing.
// Cases marked asNobody run Open in a real process of uid 65534 (root
// passes every access check).
func TestOpenVerifiesDirectory(t *testing.T) {
	mkdir := func(t *testing.T, p string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name     string
		root     bool // needs root
		asNobody bool
		setup    func(t *testing.T, base string) (dir string)
		want     []string // in the error; none: Open succeeds
	}{
		{name: "Exists", setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/state", 0o700)
			return base + "/state"
		}},
		{name: "Absent", setup: func(t *testing.T, base string) string { return base + "/state" }},
		{name: "AbsentWithParents", setup: func(t *testing.T, base string) string { return base + "/a/b/state" }},
		{name: "Symlink", setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/real", 0o700)
			if err := os.Symlink(base+"/real", base+"/state"); err != nil {
				t.Fatal(err)
			}
			return base + "/state"
		}, want: []string{"is a symlink", base0 + "/real"}},
		{name: "File", setup: func(t *testing.T, base string) string {
			if err := os.WriteFile(base+"/state", nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return base + "/state"
		}, want: []string{"is not a directory", "rm "}},
		{name: "AncestorIsFile", setup: func(t *testing.T, base string) string {
			if err := os.WriteFile(base+"/a", nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return base + "/a/b/state"
		}, want: []string{base0 + "/a is not a directory"}},
		{name: "GroupWritable", setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/state", 0o770)
			return base + "/state"
		}, want: []string{"writable by group or others", "chmod 700 " + base0 + "/state"}},
		{name: "OtherWritable", setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/state", 0o702)
			return base + "/state"
		}, want: []string{"writable by group or others", "chmod 700"}},
		{name: "ForeignOwner", root: true, setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/state", 0o700)
			if err := os.Chown(base+"/state", nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return base + "/state"
		}, want: []string{"owned by uid 65534", "chown"}},
		{name: "ReadOnlyMount", root: true, setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/state", 0o700)
			mountOrSkip(t, base+"/state", base+"/state", "", syscall.MS_BIND, "")
			if err := syscall.Mount("", base+"/state", "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
				t.Skipf("remount read-only not permitted: %v", err)
			}
			return base + "/state"
		}, want: []string{"read-only file system", "mount"}},
		{name: "NotWritable", asNobody: true, setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/state", 0o500)
			chownTree(t, base+"/state", nobody)
			return base + "/state"
		}, want: []string{"not readable, writable and searchable", "chmod 700 " + base0 + "/state"}},
		{name: "NotWritableNoParent", asNobody: true, setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/root-only", 0o755) // root's: nobody may not create in it
			return base + "/root-only/a/state"
		}, want: []string{"cannot be created", base0 + "/root-only", "mkdir -p -m 700 " + base0 + "/root-only/a/state", "chown 65534"}},
		{name: "AbsentParentWritable", asNobody: true, setup: func(t *testing.T, base string) string {
			mkdir(t, base+"/mine", 0o700)
			chownTree(t, base+"/mine", nobody)
			return base + "/mine/a/state"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.root || tt.asNobody) && os.Geteuid() != 0 {
				t.Skip("needs root")
			}
			var bin, base string
			if tt.asNobody {
				var dir string
				bin, dir = unprivileged(t) // dir: a 0700 directory of root's, in a tree nobody may enter
				base = filepath.Dir(dir)
				if err := os.Remove(dir); err != nil {
					t.Fatal(err)
				}
			} else {
				base = t.TempDir()
			}
			dir := tt.setup(t, base)
			before := tree(t, base)
			var got string
			if tt.asNobody {
				sc := startScript(t, "opendir", dir, "", &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}, bin)
				got = sc.next(t)
				sc.wait(t)
			} else {
				_, err := Open(dir)
				var de *DirError
				switch {
				case err == nil:
					got = "ok"
				case errors.As(err, &de):
					got = "direrror " + err.Error()
					if de.Dir != dir {
						t.Errorf("DirError.Dir = %q, want %q", de.Dir, dir)
					}
				default:
					got = "other " + err.Error()
				}
			}
			t.Logf("Open(%s): %s", dir, got)
			if len(tt.want) == 0 && got != "ok" {
				t.Fatalf("Open(%s) = %s, want success", dir, got)
			}
			if len(tt.want) > 0 {
				if !strings.HasPrefix(got, "direrror ") {
					t.Fatalf("Open(%s) = %s, want a *DirError", dir, got)
				}
				for _, w := range tt.want {
					if w = strings.ReplaceAll(w, base0, base); !strings.Contains(got, w) {
						t.Errorf("the error does not say %q", w)
					}
				}
			}
			if after := tree(t, base); after != before {
				t.Fatalf("Open changed the tree:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// base0 stands for the test's base directory in the wanted messages.
const base0 = "<base>"

// TestDirCheckedAtEachWrite: a state directory that becomes unusable after
// Open (a symlink, group-writable, not a directory) is refused at the next
// write with a *circuit.StateError wrapping the same *DirError.
func TestDirCheckedAtEachWrite(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spoil func(t *testing.T, dir string)
		want  string
	}{
		{"GroupWritable", func(t *testing.T, dir string) {
			if err := os.Chmod(dir, 0o770); err != nil {
				t.Fatal(err)
			}
		}, "chmod 700"},
		{"Symlink", func(t *testing.T, dir string) {
			if err := os.Rename(dir, dir+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(dir+".real", dir); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
		{"File", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is not a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			b := circuit.New(openDir(t, dir))
			if ran, _ := failN(t.Context(), b, "ledger", 1); ran != 1 {
				t.Fatal(ran)
			}
			tt.spoil(t, dir)
			ran, err := failN(t.Context(), b, "ledger", 1)
			var se *circuit.StateError
			var de *DirError
			if !errors.As(err, &se) || !errors.As(err, &de) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("a write after the directory was spoilt: %v (ran %d); want a StateError wrapping a DirError saying %q", err, ran, tt.want)
			}
		})
	}
}
