// Package templates holds the text templates circuitgen renders into files
// that are not Go, embedded in the binary. Their data comes from the
// generator's option schema and circuit.DefaultPolicy, never from copies.
package templates

import (
	"embed"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// Manifest renders a circuitgen.yaml scaffold. Its data is the scaffold
// generator.Scaffold builds (generator/scaffold.go).
var Manifest = template.Must(template.New("manifest.yaml.tmpl").ParseFS(files, "manifest.yaml.tmpl"))

// Options renders the README's table of options. Its data is the
// option schema's documentation (generator/internal/spec.Docs).
var Options = template.Must(template.New("options.md.tmpl").ParseFS(files, "options.md.tmpl"))
