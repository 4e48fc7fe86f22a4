// Package templates holds the text templates circuitgen renders into files
// that are not Go, embedded in the binary.
package templates

import (
	"embed"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// Manifest renders a circuitgen.yaml scaffold. Its data is a
// generator.ScaffoldData.
var Manifest = template.Must(template.New("manifest.yaml.tmpl").ParseFS(files, "manifest.yaml.tmpl"))
