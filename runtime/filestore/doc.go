// Package filestore is circuitgen's default circuit.Store: plain files in
// one directory, shared by every process on one server that opens the same
// directory. Nothing needs to be installed.
//
// Each circuit has two files, named by the SHA-256 of its name (the name
// itself never reaches a file name), and the directory has two more:
//
//	<sha256>.json  the record, strict versioned JSON
//	<sha256>.lock  taken with flock(2) around every replace and delete
//	index          the change index, mapped into every process (below)
//	clock          this boot's anchor of the boot clock (below)
//
// A replace reads the current record, compares it with the revision the
// Breaker decided on, and writes the new one, all under the lock: a private
// temporary file in the same directory (O_EXCL, 0600) is written, fsynced,
// closed and renamed over the record, then the directory is fsynced. A crash
// at any step leaves the old record or the new one, whole. A failed fsync is
// never retried; it is reported.
//
// Reads take no lock: rename is atomic, so a reader sees one whole record.
// A record whose file is unchanged (same inode, size and modification time,
// with the file held open so that its inode cannot be reused) is not parsed
// again.
//
// # The change index: no system call on the happy path
//
// Even a stat costs several times an in-memory breaker's whole call, so the
// common calls (a closed circuit, nothing to change; a rejection while open;
// a Snapshot) make no system call at all. The index file holds a slot per
// circuit, a tag and a change counter, and is mapped with mmap(2) into every
// process using the directory. A writer, holding the circuit's flock, makes
// the counter odd before it renames (or removes) the record and even, and
// larger, after. A reader keeps its decoded record together with the counter
// it read, even, before and after reading the file; while the counter is
// still that value it reuses the record without touching the file. A writer
// killed between its bumps leaves the counter odd, so every reader goes back
// to the file until the next writer of that circuit (it holds the same lock,
// so no other writer is half-way) moves the counter on; the next writer also
// sweeps the temporary file the dead one may have left. A circuit with no
// slot (a full, missing or foreign index) is always read from its file. A
// file changed behind the store's back (edited by hand) is seen at the
// circuit's next write, or by a process that opens the directory anew;
// circuitgen clear goes through the store.
//
// # Time
//
// Deadlines are taken from the kernel's boot clock, which every process on
// the server shares and no wall-clock step moves, so a step of the wall
// clock cannot stretch or cut short a cooldown or a lease. The first writer
// after a boot records in the clock file the boot's id and the wall-clock
// time at which the boot clock read zero; every process adds the boot clock
// to that anchor, so recorded times read as wall-clock times. A reboot is
// detected by its new boot id and anchored anew. Store.Now is that clock;
// Load returns the zero Time and the Breaker reads Now only when a decision
// needs it.
//
// Decoding is strict: an unknown version, unknown or duplicate fields,
// trailing data, wrong types, unknown states and inconsistent fields are
// corrupt, reported as errors wrapping circuit.ErrCorrupt, and never reset;
// circuit.Breaker.Clear removes such a record. Records persist until cleared,
// closed ones too, so a call admitted in an earlier generation can never
// match a later one.
//
// The directory must not be a symlink nor writable by group or others, and
// records and locks must not be symlinks. Open creates nothing: the
// directory (0700) and files (0600) appear on the first write.
//
// The store is for one server with a local filesystem. It does not
// coordinate several servers, nor work over NFS: use a distributed store for
// that.
package filestore
