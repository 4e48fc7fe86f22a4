// Package templates holds the text templates circuitgen renders into files
// that are not Go, embedded in the binary. Their data comes from the
// generator's option schema and circuit.DefaultPolicy, never from copies.
package templates

import (
	"embed"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// Manifest renders a circuitgen.yaml scaffold. Its data is the scaffold
// generator.Scaffold builds (generator/scaffold.go).
var Manifest = template.Must(template.New("manifest.yaml.tmpl").ParseFS(files, "manifest.yaml.tmpl"))

// Struct renders the Go file of a struct client's scaffold: an interface
// of its methods, the directives, and the assertion that the struct
// implements it. Its data is the scaffold generator.Scaffold builds.
var Struct = template.Must(template.New("struct.go.tmpl").Funcs(template.FuncMap{"join": strings.Join}).ParseFS(files, "struct.go.tmpl"))

// Options renders the README's table of options. Its data is the
// option schema's documentation (generator/internal/spec.Docs).
var Options = template.Must(template.New("options.md.tmpl").ParseFS(files, "options.md.tmpl"))
