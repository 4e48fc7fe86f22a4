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

// lockFile takes the flock of the lock file at path, creating it 0600: a
// regular file, not a symlink, owned by this process's user.
func lockFile(ctx context.Context, path string) (*flock.Flock, error) {
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|oNoFollow), flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, lockRetry)
	if err != nil || !ok {
		_ = fl.Close()
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("lock %s is a symlink: refused", path)
		}
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	fi, err := fl.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file: refused")
	}
	if err == nil {
		err = checkOwner("lock", path, fi)
	}
	if err == nil && fi.Mode().Perm() != 0o600 {
		if err = os.Chmod(path, 0o600); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if err != nil {
		_ = fl.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return fl, nil
}
