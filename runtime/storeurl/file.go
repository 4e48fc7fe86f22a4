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
func openFile(u *url.URL) (*Store, error) {
	if u.Opaque != "" || u.Host != "" && u.Host != "localhost" {
		return nil, errors.New("a file URL is file:///absolute/path/to/dir (three slashes, no host)")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("a file URL takes no user, query or fragment")
	}
	dir := filepath.FromSlash(u.Path)
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("path %q is not absolute", u.Path)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("state directory %s does not exist", dir)
	case err != nil:
		return nil, fmt.Errorf("state directory: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	fst, err := filestore.Open(dir)
	if err != nil {
		return nil, err
	}
	return &Store{Store: fst, names: fst.Names}, nil
}
