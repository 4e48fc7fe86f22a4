package generator

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
)

// Write writes every output file, each atomically: a temporary file in the
// same directory renamed over the old one. Unchanged files are left alone.
func Write(outs []Output) error {
	for _, o := range outs {
		if old, err := os.ReadFile(o.Path); err == nil && string(old) == string(o.Content) {
			continue
		}
		if err := writeFile(o.Path, o.Content); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes data to path through a temporary file.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".circuitgen-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Check compares every output with the file on disk and writes a unified
// diff of each stale one to w, with paths relative to dir. It reports
// whether anything is stale.
func Check(outs []Output, dir string, w io.Writer) (stale bool, err error) {
	for _, o := range outs {
		old, err := os.ReadFile(o.Path)
		if err != nil && !os.IsNotExist(err) {
			return false, fmt.Errorf("check %s: %w", o.Path, err)
		}
		name := filepath.ToSlash(diag.RelPath(dir, o.Path))
		if d := diff(name, name+" (generated)", old, o.Content); d != "" {
			stale = true
			if _, err := io.WriteString(w, d); err != nil {
				return stale, fmt.Errorf("check: %w", err)
			}
		}
	}
	return stale, nil
}
