// Package filestore is circuitgen's default circuit.Store: plain files in
// one directory, shared by every process on one server that opens the same
// directory. Nothing needs to be installed.
//
// Each circuit has two files, named by the SHA-256 of its name (the name
// itself never reaches a file name):
//
//	<sha256>.json  the record, strict versioned JSON
//	<sha256>.lock  taken with flock(2) around every replace and delete
//
// A replace reads the current record, compares it with the revision the
// Breaker decided on, and writes the new one, all under the lock: a private
// temporary file in the same directory (O_EXCL, 0600) is written, fsynced,
// closed and renamed over the record, then the directory is fsynced. A crash
// at any step leaves the old record or the new one, whole. A failed fsync is
// never retried; it is reported.
//
// Reads take no lock: rename is atomic, so a reader sees one whole record.
// A record whose file is unchanged (same inode, size and modification time)
// is not parsed again, so the common case (a closed circuit, nothing to
// change) takes no lock, writes nothing and decodes nothing.
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
