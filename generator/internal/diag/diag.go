// Package diag collects the problems a generator run finds, each at a
// position, and reports them at once as file:line:col: message.
package diag

import (
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// Error is one problem found in a Go file or a manifest, at a position.
type Error struct {
	// Pos is where the problem is; Pos.Filename may be empty.
	Pos token.Position
	// Msg describes the problem, in lower case.
	Msg string
}

// Error formats the problem as file:line:col: message.
func (e *Error) Error() string {
	if !e.Pos.IsValid() && e.Pos.Filename == "" {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// List is every problem found in one run.
type List []*Error

// Error returns the problems, one a line.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Collector gathers the problems of one run. Every stage is given the
// run's one Collector when it is made, and records problems in it.
type Collector struct {
	list List
	// warnings are what may be wrong but does not stop the run.
	warnings List
}

// Warn records, at pos, what may be wrong but does not stop the run.
func (c *Collector) Warn(pos token.Position, format string, args ...any) {
	c.warnings = append(c.warnings, &Error{Pos: pos, Msg: "warning: " + fmt.Sprintf(format, args...)})
}

// Warnings returns the warnings recorded, sorted as Err sorts problems.
func (c *Collector) Warnings(dir string) List { return sorted(c.warnings, dir) }

// Add records a problem at pos.
func (c *Collector) Add(pos token.Position, format string, args ...any) {
	c.list = append(c.list, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// Len returns how many problems were recorded.
func (c *Collector) Len() int { return len(c.list) }

// Errors returns the problems recorded (for tests of a single stage).
func (c *Collector) Errors() List { return c.list }

// Err returns the problems sorted by position and with duplicates removed,
// or nil when there are none. File names are made relative to dir where
// possible.
func (c *Collector) Err(dir string) error {
	if len(c.list) == 0 {
		return nil
	}
	return sorted(c.list, dir)
}

// sorted returns list sorted by position, with duplicates removed and file
// names made relative to dir.
func sorted(list List, dir string) List {
	if len(list) == 0 {
		return nil
	}
	l := make(List, len(list))
	for i, e := range list {
		cp := *e
		cp.Pos.Filename = RelPath(dir, cp.Pos.Filename)
		cp.Msg = strings.ReplaceAll(cp.Msg, dir+string(filepath.Separator), "")
		l[i] = &cp
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return l[i].Msg < l[j].Msg
	})
	out := l[:0]
	for i, e := range l {
		if i > 0 && e.Error() == l[i-1].Error() {
			continue
		}
		out = append(out, e)
	}
	return out
}

// RelPath returns path relative to dir when path lies below dir.
func RelPath(dir, path string) string {
	if dir == "" || path == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return rel
}

// File returns the position of a whole file, or no position for "".
func File(name string) token.Position { return token.Position{Filename: name} }

// FileStart returns the position of a file's first byte.
func FileStart(name string) token.Position { return token.Position{Filename: name, Line: 1, Column: 1} }
