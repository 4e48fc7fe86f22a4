package filestore

import "io/fs"

// faultHook, when set (by tests only), is consulted before each filesystem
// operation the store makes, with the operation's name: "mkdir" (creating the state directory, then "chmod" on
// it), "lock", "index" (opening the change index), "boot" (reading the
// boot id), "read" (reading the
// record), "create" (the temporary record), "chmod", "write", "fsync",
// "close", "rename", "remove" and "dirsync". A non-nil error is used as that operation's error,
// wrapped as the real call's error would be; the real call is not made (a
// close is still made, so that no descriptor leaks). Fault-injection tests
// fail the Nth operation with it.
var faultHook func(op string) error

// fault returns the error faultHook injects for op, as an *fs.PathError of
// the system call pathOp on path, or nil when there is no hook or the hook
// lets op through.
func fault(op, pathOp, path string) error {
	if faultHook == nil {
		return nil
	}
	if err := faultHook(op); err != nil {
		return &fs.PathError{Op: pathOp, Path: path, Err: err}
	}
	return nil
}
