package generator

import (
	"go/ast"
	"go/token"
)

// ifaceSpec is one interface to guard, as a directive or a manifest gave it.
type ifaceSpec struct {
	// Pos is the guard directive or the manifest's source entry.
	Pos token.Position
	// PkgPath is the interface's package; "" is the target package.
	PkgPath, Name string
	// Opts are the interface's options: wrapper, circuit, skip, and the
	// defaults of its methods.
	Opts options
	// Methods are what the directives or the manifest say of single
	// methods, by name.
	Methods map[string]*methodSpec
	// File is the file declaring the interface, when it was parsed.
	File *ast.File
	// Target is the directory of the package the wrapper goes into.
	Target string
	// Manifest marks an interface listed in a manifest.
	Manifest bool
}

// methodSpec is what a directive or a manifest says about one method.
type methodSpec struct {
	Pos  token.Position
	Skip bool
	Opts options
}
