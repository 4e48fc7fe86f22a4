//go:build linux

package filestore

// The nemesis's faults: each injects one fault of a hostile server, and
// schedules its end where a fault has one.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// nemFault is a kind of fault.
type nemFault struct {
	kind      string
	needsRoot bool // it needs the workers to be another user (root)
	stale     bool // it may let processes use copies until they check the index (nStale)
	inject    func(*nemesis)
}

var nemFaults = []nemFault{
	{kind: "sigkill", inject: (*nemesis).sigkill},
	{kind: "sigstop", inject: (*nemesis).sigstop},
	{kind: "nofile", inject: (*nemesis).nofile},
	{kind: "full", inject: func(n *nemesis) { n.fill([]int64{0, 8 << 10, 32 << 10}[n.rng.IntN(3)]) }},
	{kind: "index", stale: true, inject: (*nemesis).damageIndex},
	{kind: "records", inject: (*nemesis).removeRecords},
	{kind: "perm", inject: (*nemesis).flipPermission},
	{kind: "owner", needsRoot: true, inject: (*nemesis).flipOwner},
	{kind: "rollback", stale: true, inject: (*nemesis).rollBackIndex},
	{kind: "dir", stale: true, inject: (*nemesis).replaceDir},
}

// span returns a random duration in [lo, hi).
func (n *nemesis) span(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(n.rng.Int64N(int64(hi-lo)))
}

// count records a fault injected now.
func (n *nemesis) count(kind string) {
	n.faults[kind]++
	n.events = append(n.events, nemEvent{boot: bootNanos(), kind: kind})
}

// victim returns a random live worker, not a stopped one unless any.
func (n *nemesis) victim(any bool) *nemChild {
	var cands []*nemChild
	for _, c := range n.live {
		if any || !c.stopped {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[n.rng.IntN(len(cands))]
}

// sigkill kills a worker and starts another in its place.
func (n *nemesis) sigkill() {
	c := n.victim(true)
	c.killed = true
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
	n.count("sigkill")
	n.reap()
}

// sigstop stops a worker for up to two and a half seconds: longer than a
// probe's lease, so that its claim may be taken over while it sleeps.
func (n *nemesis) sigstop() {
	c := n.victim(false)
	if c == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGSTOP)
	c.stopped = true
	n.count("sigstop")
	n.later(n.span(200*time.Millisecond, 2500*time.Millisecond), "sigstop", func() {
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		c.stopped = false
	})
}

// nofile has a worker lower its RLIMIT_NOFILE soft limit to what it has
// open, or to zero, so that every descriptor it opens fails with EMFILE,
// then restores it. Half the time the worker is a new one, limited before
// it first touches the store, that takes the place of one told to exit.
// The worker sets the limit itself (setrlimit): prlimit(2) on another
// user's process needs CAP_SYS_RESOURCE, which root in a container may
// lack.
func (n *nemesis) nofile() {
	c := n.victim(false)
	if c == nil {
		return
	}
	if n.rng.IntN(2) == 0 {
		r := n.spawn("0")
		r.send("go")
		n.live[slices.Index(n.live, c)] = r
		c.closing = true
		_ = c.in.Close()
		n.count("nofile at start")
		n.later(n.span(200*time.Millisecond, 2*time.Second), "nofile", func() { r.send("limit restore") })
		return
	}
	limit := 0
	if n.rng.IntN(2) == 0 {
		if fds, err := os.ReadDir("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/fd"); err == nil {
			limit = len(fds)
		}
	}
	c.send("limit " + strconv.Itoa(limit))
	n.count("nofile")
	n.later(n.span(300*time.Millisecond, 3*time.Second), "nofile", func() { c.send("limit restore") })
}

// fill fills the state directory's tmpfs until leave bytes are free (the
// change index needs 68 KiB; a record 4 KiB), then frees it later.
func (n *nemesis) fill(leave int64) {
	path := filepath.Join(n.env.mnt, ".nemesis-filler")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		n.t.Logf("fill: %v", err)
		return
	}
	buf := make([]byte, 4<<10)
	var size int64
	for {
		m, err := f.Write(buf)
		size += int64(m)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			n.t.Fatalf("fill: %v", err)
		}
	}
	if err := f.Truncate(max(0, size-leave)); err != nil {
		n.t.Fatalf("fill: %v", err)
	}
	_ = f.Close()
	n.count(fmt.Sprintf("full (%d KiB left)", leave>>10))
	n.later(n.span(300*time.Millisecond, 3*time.Second), "full", func() { _ = os.Remove(path) })
}

// damageIndex removes the change index, or puts a copy cut short in its
// place by a rename: damaged, or (half the time) zero-extended back to its
// size, a usable index with its counters and slots blank. Each is outside
// the model: workers still on the old file see the changes made under the
// new one only at their recheck (nStale). Truncating the index in place
// kills the workers using it (TestIndexTruncatedUnderRunningProcess).
func (n *nemesis) damageIndex() {
	path := filepath.Join(n.env.state, indexName)
	start := bootNanos()
	stale := func() {
		n.log.stale = append(n.log.stale, nStale{after: start, until: bootNanos() + int64(recheck+staleSlack)})
	}
	if n.rng.IntN(4) == 0 {
		if os.Remove(path) == nil {
			stale()
			n.count("index removed")
		}
		return
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) != indexSize {
		return
	}
	size := []int{0, 64, 4096, indexSize - 16, n.rng.IntN(indexSize)}[n.rng.IntN(5)]
	blank := n.rng.IntN(2) == 0
	cut := data[:size]
	if blank {
		cut = append(cut, make([]byte, indexSize-size)...)
	}
	tmp := path + ".nemesis"
	if err := os.WriteFile(tmp, cut, 0o600); err != nil {
		_ = os.Remove(tmp)
		n.t.Logf("damage index: %v", err)
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok { // the workers' file, as a truncation leaves it
		if err := os.Chown(tmp, int(st.Uid), int(st.Gid)); err != nil {
			n.t.Logf("damage index: %v", err)
			return
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		n.t.Logf("damage index: %v", err)
		return
	}
	stale()
	if !blank {
		n.count("index replaced by a short copy")
		return
	}
	n.count("index replaced by a blanked copy")
}

func (n *nemesis) chown(path string) {
	if n.env.cred != nil {
		_ = os.Lchown(path, int(n.env.cred.Uid), int(n.env.cred.Gid))
	}
}

// records returns the state directory's record files.
func (n *nemesis) records() []string {
	paths, _ := filepath.Glob(filepath.Join(n.env.state, "*.json"))
	return paths
}

// removeRecords removes one record file, or all of them, behind the
// store's back: the checker counts it as a reset of those circuits.
func (n *nemesis) removeRecords() {
	paths := n.records()
	if len(paths) == 0 {
		return
	}
	if n.rng.IntN(2) == 0 {
		paths = paths[n.rng.IntN(len(paths)):][:1]
	}
	start := bootNanos()
	for _, p := range paths {
		_ = os.Remove(p)
	}
	end := bootNanos()
	if len(paths) == 1 {
		n.log.resets = append(n.log.resets, nSpan{circuit: n.circuitOf(paths[0]), start: start, end: end})
		n.count("record removed")
	} else {
		n.log.resets = append(n.log.resets, nSpan{start: start, end: end})
		n.count("all records removed")
	}
}

// circuitOf returns the nemesis circuit whose record is at path.
func (n *nemesis) circuitOf(path string) string {
	for _, name := range nemCircuits {
		if n.entryPath(name) == path {
			return name
		}
	}
	return ""
}

func (n *nemesis) entryPath(name string) string {
	return filepath.Join(n.env.state, circuit.Key(name)+".json")
}

// flipPermission takes away the workers' access for a while: the
// directory made read-only (0500), a record or a lock made unreadable
// (0000), or a lock replaced by a directory.
func (n *nemesis) flipPermission() {
	lock := filepath.Join(n.env.state, circuit.Key(nemCircuits[n.rng.IntN(len(nemCircuits))])+".lock")
	switch n.rng.IntN(4) {
	case 0:
		if os.Chmod(n.env.state, 0o500) == nil {
			start := bootNanos()
			n.count("directory 0500")
			n.later(n.span(300*time.Millisecond, 3*time.Second), "perm", func() {
				n.log.unwritable = append(n.log.unwritable, nSpan{start: start, end: bootNanos()})
				_ = os.Chmod(n.env.state, 0o700)
			})
		}
	case 1:
		paths := n.records()
		if len(paths) == 0 {
			return
		}
		p := paths[n.rng.IntN(len(paths))]
		if os.Chmod(p, 0) == nil {
			n.count("record 0000")
			n.later(n.span(300*time.Millisecond, 3*time.Second), "perm", func() { _ = os.Chmod(p, 0o600) })
		}
	case 2:
		if os.Chmod(lock, 0) == nil {
			n.count("lock 0000")
			n.later(n.span(300*time.Millisecond, 3*time.Second), "perm", func() { _ = os.Chmod(lock, 0o600) })
		}
	case 3:
		if _, err := os.Lstat(lock); err != nil {
			return
		}
		_ = os.Remove(lock)
		if os.Mkdir(lock, 0o700) == nil {
			n.chown(lock)
			n.count("lock replaced by a directory")
			// rmdir: a lock file a worker made since (the directory replaced
			// meanwhile) must not be removed under its holder.
			n.later(n.span(300*time.Millisecond, 3*time.Second), "perm", func() { _ = syscall.Rmdir(lock) })
		}
	}
}

// flipOwner gives a record to root (the workers are nobody) for a while.
func (n *nemesis) flipOwner() {
	paths := n.records()
	if len(paths) == 0 {
		return
	}
	p := paths[n.rng.IntN(len(paths))]
	if os.Lchown(p, 0, 0) == nil {
		n.count("record owned by root")
		n.later(n.span(300*time.Millisecond, 3*time.Second), "owner", func() { n.chown(p) })
	}
}

// rollBackIndex copies the change index now and, later, writes the copy
// back over it in place (the same inode) with pwrite, as dd conv=notrunc
// does (cp truncates first: outside the model, it kills the workers using
// the index). Every counter goes back to a
// value the workers may have seen, hiding the changes made in between from
// those that did not look since: they may use their copies until they
// check the index again (nStale).
func (n *nemesis) rollBackIndex() {
	path := filepath.Join(n.env.state, indexName)
	fi, err := os.Lstat(path)
	if err != nil || fi.Size() != indexSize {
		return
	}
	copied := bootNanos()
	data, err := os.ReadFile(path)
	if err != nil || len(data) != indexSize {
		return
	}
	n.later(n.span(50*time.Millisecond, 1500*time.Millisecond), "rollback", func() {
		now, err := os.Lstat(path)
		if err != nil || identify(now) != identify(fi) {
			return // another index by now: a copy of the old one would be damage, another fault
		}
		cur, err := os.ReadFile(path)
		if err != nil || len(cur) != indexSize {
			return
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, err = f.WriteAt(data, 0)
		end := bootNanos()
		_ = f.Close()
		if err != nil {
			return
		}
		if was, is := int64(binary.NativeEndian.Uint64(cur[hdrAnchor:])), int64(binary.NativeEndian.Uint64(data[hdrAnchor:])); is < was {
			n.earlier += time.Duration(was - is) // an anchor changed in place since, put back
		}
		n.log.stale = append(n.log.stale, nStale{after: copied, before: end, until: end + int64(recheck+staleSlack)})
		n.count("index rolled back in place (pwrite)")
	})
}

// staleSlack is how late a worker's ticker may mark its mapping due, on a
// loaded machine, beyond recheck.
const staleSlack = 500 * time.Millisecond

// replaceDir removes the state directory (rm -rf) or moves it aside (mv),
// behind the workers' backs, and half the time makes it anew at once
// (empty, 0700, the workers'); otherwise the first worker to write makes
// it. Every circuit starts afresh (a reset); a worker may use copies from
// the old directory until it checks the index again (nStale). A directory
// moved aside is removed later.
func (n *nemesis) replaceDir() {
	state := n.env.state
	start := bootNanos()
	aside := ""
	how := "removed"
	if n.rng.IntN(2) == 0 {
		aside = fmt.Sprintf("%s.aside-%d", state, len(n.events))
		if os.Rename(state, aside) != nil {
			return
		}
		how = "moved aside"
	} else {
		var err error
		for range 10 { // workers may be creating files in it meanwhile
			if err = os.RemoveAll(state); err == nil {
				break
			}
		}
		if err != nil {
			n.t.Logf("rm -rf %s: %v", state, err)
			return
		}
	}
	if n.rng.IntN(2) == 0 {
		if os.Mkdir(state, 0o700) == nil {
			n.chown(state)
			how += ", made anew"
		}
	}
	end := bootNanos()
	n.log.resets = append(n.log.resets, nSpan{start: start, end: end})
	n.log.stale = append(n.log.stale, nStale{after: start, until: end + int64(recheck+staleSlack)})
	n.count("directory " + how)
	if aside != "" {
		n.later(n.span(200*time.Millisecond, time.Second), "dir", func() { _ = os.RemoveAll(aside) })
	}
}
