//go:build !linux && !darwin

package filestore

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"time"
)

const (
	oNoFollow = 0
	oNonBlock = 0
)

var errUnsupported = errors.New("filestore: the file store needs linux or darwin (it relies on flock, mmap and a boot clock); on " +
	runtime.GOOS + " use a distributed store: runtime/redisstore or runtime/sqlstore")

func supported() error { return errUnsupported }

func accessible(string, uint32) error { return errUnsupported }

func bootClock() (time.Duration, error) { return 0, errUnsupported }

func bootID() (string, error) { return "", errUnsupported }

func identify(fs.FileInfo) fileID { return fileID{uid: -1} }

func changeTime(fs.FileInfo) int64 { return 0 }

func mapShared(*os.File, int) ([]byte, error) { return nil, errUnsupported }

func unmap([]byte) {}

func detach([]byte) error { return errUnsupported }
