package filestore

import (
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// bootClock reads CLOCK_MONOTONIC, which on darwin (unlike
// CLOCK_UPTIME_RAW, and unlike linux's CLOCK_MONOTONIC) keeps counting while
// the machine sleeps, so a laptop that sleeps through a cooldown sees it
// elapse; it never steps.
func bootClock() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, fmt.Errorf("read boot clock: %w", err)
	}
	return time.Duration(ts.Nano()), nil
}

// bootID returns the kernel's id of this boot session.
func bootID() (string, error) {
	id, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil || id == "" {
		return "", fmt.Errorf("read boot id (sysctl kern.bootsessionuuid): %v", err)
	}
	return id, nil
}

// changeTime returns the file's status change time (st_ctimespec) in Unix ns.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
