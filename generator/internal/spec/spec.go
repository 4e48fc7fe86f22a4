// Package spec reads what the user asked for: the //circuitgen: directives
// of Go files and the circuitgen.yaml manifest, decoded once, by one option
// schema, into typed specs. Values that are wrong on their own are
// reported here, at the position they were given; what needs the loaded
// types (error names, method signatures, whole policies) is checked by the
// model.
package spec

import (
	"go/ast"
	"go/token"
)

// Interface is one interface to guard, as a directive or a manifest gave it.
type Interface struct {
	// Pos is the guard directive or the manifest's source entry.
	Pos token.Position
	// PkgPath is the interface's package; "" is the target package.
	PkgPath, Name string
	// Opts are the interface's options: wrapper, circuit, skip, and the
	// defaults of its methods.
	Opts Options
	// Methods are what the directives or the manifest say of single
	// methods, by name.
	Methods map[string]*Method
	// File is the file declaring the interface, when it was parsed.
	File *ast.File
	// Target is the directory of the package the wrapper goes into.
	Target string
	// Manifest marks an interface listed in a manifest.
	Manifest bool
}

// Method is what a directive or a manifest says about one method.
type Method struct {
	Pos  token.Position
	Skip bool
	Opts Options
}

// Names returns the names the options of s and its methods give of
// errors and classifiers, with the file they are read in.
func (s *Interface) Names() []Entry[string] {
	levels := []*Options{&s.Opts}
	for _, m := range s.Methods {
		levels = append(levels, &m.Opts)
	}
	var names []Entry[string]
	for _, o := range levels {
		names = append(names, o.Errors.Entries...)
		if o.Classifier.Set && !o.Classifier.Bad {
			names = append(names, Entry[string]{Val: o.Classifier.Val, Text: o.Classifier.Val, Pos: o.Classifier.Pos})
		}
	}
	return names
}
