package generator

import (
	"bytes"
	"fmt"
	"go/types"
	"strings"

	"github.com/circuitgen/circuitgen/templates"
)

// ScaffoldData is what the manifest scaffold template renders.
type ScaffoldData struct {
	// Source is the interface, as IMPORTPATH.Name.
	Source string
	// File and Output are the manifest's and the output's file names.
	File, Output string
	// Wrapper and Circuit are the suggested wrapper and circuit names.
	Wrapper, Circuit string
	// Methods are the interface's methods.
	Methods []ScaffoldMethod
}

// ScaffoldMethod is one method in the scaffold.
type ScaffoldMethod struct {
	// Name is the method's name; Signature its signature, as Go.
	Name, Signature string
	// Skip marks a method that does not return error last.
	Skip bool
}

// Scaffold loads the interface source (IMPORTPATH.Name) from dir and
// renders a manifest scaffold, named file, that lists every method.
func Scaffold(dir, source, file string, tags []string) ([]byte, error) {
	i := strings.LastIndex(source, ".")
	if i <= 0 || strings.Contains(source[i:], "/") {
		return nil, fmt.Errorf("source %q must be IMPORTPATH.Interface", source)
	}
	path, name := source[:i], source[i+1:]
	l, err := load(dir, []string{path}, tags, nil)
	if err != nil {
		return nil, err
	}
	pkg := l.byPath[path]
	if pkg == nil {
		return nil, fmt.Errorf("cannot load package %q%s", path, l.loadError(path))
	}
	obj, _ := pkg.Scope().Lookup(name).(*types.TypeName)
	if obj == nil {
		return nil, fmt.Errorf("no type %s in package %s", name, path)
	}
	iface, ok := obj.Type().Underlying().(*types.Interface)
	if !ok {
		return nil, fmt.Errorf("%s is not an interface type", source)
	}
	data := ScaffoldData{
		Source: source, File: file, Output: DefaultOutput,
		Wrapper: "Guarded" + name, Circuit: kebab(name),
	}
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		sig := fn.Type().(*types.Signature)
		res := sig.Results()
		skip := res.Len() == 0 || !types.Identical(res.At(res.Len()-1).Type(), errorType)
		data.Methods = append(data.Methods, ScaffoldMethod{
			Name:      fn.Name(),
			Signature: fn.Name() + strings.TrimPrefix(types.TypeString(sig, (*types.Package).Name), "func"),
			Skip:      skip,
		})
	}
	var buf bytes.Buffer
	if err := templates.Manifest.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("render manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// kebab turns RoundTripper into round-tripper.
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 && !('A' <= rune(s[i-1]) && rune(s[i-1]) <= 'Z') {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
