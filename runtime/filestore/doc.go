// Package filestore is circuitgen's default circuit.Store: plain files in
// one directory, shared by every process on one server that opens the same
// directory. Nothing needs to be installed.
//
// # Platforms
//
// The store works on linux and darwin: it needs flock(2), mmap(2), rename(2)
// and a boot clock. On other systems (windows, …) the package compiles, and
// Open returns an error saying the file store needs linux or darwin and
// naming the distributed stores (runtime/redisstore, runtime/sqlstore). The
// OS-specific code is in sys_linux.go, sys_darwin.go, sys_unix.go and
// sys_other.go (sys.go lists what they provide); the rest is shared.
//
// # Files
//
// Each circuit has two files, named by the SHA-256 of its name (the name
// itself never reaches a file name), and the directory has two more:
//
//	<sha256>.json  the record, strict versioned JSON, at most 4 KiB
//	<sha256>.lock  taken with flock(2) around every replace and delete
//	index          the change index and the clock anchor, mapped into every process (below)
//	index.keep     a second name of the index file: an index removed by hand is put back from it
//	index.lock     taken while the index is created, replaced or anchored
//
// A replace reads the current record, compares it with the revision the
// Breaker decided on, and writes the new one, all under the lock: a private
// temporary file in the same directory (<sha256>.json.tmp-next, O_EXCL,
// 0600) is written, fsynced, closed and renamed over the record, then the
// directory is fsynced. A temporary file a killed writer left is in the next
// writer's way, and is removed (not followed) by it. A crash
// at any step leaves the old record or the new one, whole. A failed fsync is
// never retried; it is reported.
//
// Reads take no lock: rename is atomic, so a reader sees one whole record.
// A record is read with a bounded reader and no file stays open after a
// read or write, so a process holds a few descriptors however many circuits
// it uses. A record file larger than 4 KiB is corrupt.
//
// # The change index: no system call on the happy path
//
// Even a stat costs several times an in-memory breaker's whole call, so the
// common calls (a closed circuit, nothing to change; a rejection while open;
// a Snapshot) make no system call. The index file, mapped with mmap(2) into
// every process using the directory, holds a change counter per circuit (a
// slot of its own for the first 4,096 circuits, shared spill counters for
// the others; index.go). A writer, holding the circuit's flock, changes the
// counter before it renames (or removes) the record and after. A reader
// keeps its decoded record together with the counter it read, stable, before
// and after reading the file; while the counter is still that value it
// reuses the record without touching the file. The rule: no process uses a
// copy of a record after any process changed it. Hence:
//
//   - a writer renames nothing unless it has bumped the index every reader
//     watches, checked under the circuit's lock to still be the directory's
//     index file; an index that cannot be opened or created is a
//     StateError, and is tried again on the next call, never given up on;
//   - a process trusts its mapping for at most a second without one lstat
//     to check that the index file is still the one it mapped (a copy reads
//     the clock at one use in 16 to see whether the check is due), and
//     checks it at every read of a record file and every write: an index
//     (or the whole directory) removed or replaced is seen by readers within
//     that second and 16 uses of a copy, at once by writers, and every copy
//     read under the old mapping is dropped. An index removed by hand is put
//     back from index.keep, so the processes that map it never lose it; an
//     index replaced because it was damaged is first marked in every counter,
//     so that every process still mapping it drops its copies at once;
//   - a truncated, short or garbage index is a *circuit.StateError for the
//     call that finds it (the mapping is accessed with faults turned into
//     errors, never a SIGBUS), which replaces the index; a directory planted
//     as the index cannot be replaced and every write fails closed;
//   - a record removed or edited behind the store's back is seen by the
//     next write of its circuit, which finds the file not what the counter
//     promised and moves the counter on, so every process reads the file
//     again; circuitctl clear goes through the store.
//
// A writer killed between its two marks leaves the counter showing a change
// in progress, and readers go to the file until the next writer moves it on.
//
// # Failed writes fail closed
//
// Once a write for a circuit fails (an unwritable or full directory, a lock
// that cannot be taken, an unusable index), no call on that circuit is
// admitted in that process until a write succeeds: Load returns a
// StateError, after trying a write of its own (every step of a record write
// but the rename, under the lock), so the circuit reopens to calls as soon
// as the store is writable again.
//
// # Time
//
// Deadlines are taken from the kernel's boot clock (linux CLOCK_BOOTTIME,
// darwin CLOCK_MONOTONIC: both count through suspend), which every process on
// the server shares and no wall-clock step moves, so a step of the wall
// clock cannot stretch or cut short a cooldown or a lease. The anchor (the
// wall-clock time at which the boot clock read zero) is kept in the index
// header with the boot's id, written once per boot by its first writer, so
// every process reads the same anchor from the same memory. An index made
// anew within a boot takes an anchor no later than the lost one, so no
// deadline ends early (clock.go). Store.Now is that clock; Load returns the
// zero Time and the Breaker reads Now only when a decision needs it.
//
// Decoding is strict: an unknown version, unknown or duplicate fields,
// trailing data, wrong types, unknown states and inconsistent fields are
// corrupt, reported as errors wrapping circuit.ErrCorrupt, and never reset;
// circuit.Breaker.Clear removes such a record. Records persist until cleared,
// closed ones too, so a call admitted in an earlier generation can never
// match a later one.
//
// # Trust
//
// The directory must not be a symlink nor writable by group or others, and
// it, the records, the locks and the index must be owned by the user the
// process runs as (ssh's StrictModes is the precedent): otherwise every call
// is refused with an error naming the owner and the fix. Records and locks
// must not be symlinks. Open creates nothing: the directory (0700) and files
// (0600) appear on the first write.
//
// The store is for one server with a local filesystem. It does not
// coordinate several servers, nor work over NFS: use a distributed store for
// that.
package filestore
