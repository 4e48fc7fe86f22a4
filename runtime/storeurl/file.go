package storeurl

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// openFile opens file:///abs/dir: a state directory that must exist.
func openFile(u *url.URL) (Store, error) {
	if u.Opaque != "" || u.Host != "" && u.Host != "localhost" {
		return nil, errors.New("a file URL is file:///absolute/path/to/dir (three slashes, no host)")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("a file URL takes no user, query or fragment")
	}
	dir, err := localPath(u, "state directory", true)
	if err != nil {
		return nil, err
	}
	fst, err := filestore.Open(dir)
	if err != nil {
		return nil, err
	}
	return fst, nil
}

// localPath returns the absolute local path that u names, which must be an
// existing directory (when dir is set) or regular file; what names it in
// errors ("state directory", "database file").
func localPath(u *url.URL, what string, dir bool) (string, error) {
	path := filepath.FromSlash(u.Path)
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("path %q is not absolute", u.Path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s %s does not exist", what, path)
	case err != nil:
		return "", fmt.Errorf("%s: %w", what, err)
	case dir && !fi.IsDir():
		return "", fmt.Errorf("%s is not a directory", path)
	case !dir && !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	return path, nil
}
