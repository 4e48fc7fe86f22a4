package generator

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

// ErrorList is every problem found in one run.
type ErrorList []*Error

// Error returns the problems, one a line, sorted by position.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// add records a problem at pos.
func (l *ErrorList) add(pos token.Position, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// err returns the list sorted by position and with duplicates removed, or
// nil when it is empty. File names are made relative to dir where possible.
func (l ErrorList) err(dir string) error {
	if len(l) == 0 {
		return nil
	}
	for _, e := range l {
		e.Pos.Filename = relPath(dir, e.Pos.Filename)
		e.Msg = strings.ReplaceAll(e.Msg, dir+string(filepath.Separator), "")
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

// relPath returns path relative to dir when path lies below dir.
func relPath(dir, path string) string {
	if dir == "" || path == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return rel
}

// posOf returns the position of a whole file, or no position.
func posOf(file string) token.Position { return token.Position{Filename: file} }
