package filestore

import "os"

// writeWhole writes data to a new temporary file in dir (named by pattern,
// as os.CreateTemp takes it), 0600, fsynced and closed, and returns its
// path, for the caller to link or rename into place and then remove. It is
// how files every process maps or reads whole (the index, the window files) come
// into being: never seen half-written.
func writeWhole(dir, pattern string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
