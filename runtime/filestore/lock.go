package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// lockRetry is how often a waiting process tries the lock again.
const lockRetry = time.Millisecond

// locked runs fn holding the circuit's flock. Each call opens its own lock
// handle: flock locks belong to an open file, so two handles exclude each
// other even within one process, where a shared *flock.Flock would not.
func (s *Store) locked(ctx context.Context, e *entry, fn func() error) (err error) {
	path := e.lockTo
	if err := fault("lock", "open", path); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW), flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, lockRetry)
	if err != nil || !ok {
		_ = fl.Close()
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("lock %s is a symlink: refused", path)
		}
		if err == nil {
			err = ctx.Err()
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer func() {
		if cerr := fl.Close(); cerr != nil && err == nil { // Close unlocks
			err = fmt.Errorf("unlock %s: %w", path, cerr)
		}
	}()
	if fi, err := fl.Stat(); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	} else if fi.Mode().Perm() != 0o600 {
		if err := os.Chmod(path, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("lock %s: %w", path, err)
		}
	}
	return fn()
}
