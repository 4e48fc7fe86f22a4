package generator

import (
	"bytes"
	"fmt"
	"go/types"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/load"
	"github.com/circuitgen/circuitgen/generator/internal/model"
	"github.com/circuitgen/circuitgen/generator/internal/spec"
	"github.com/circuitgen/circuitgen/templates"
)

// scaffold is what the manifest scaffold template (templates.Manifest)
// renders.
type scaffold struct {
	// Source is the interface, as IMPORTPATH.Name.
	Source string
	// File and Output are the manifest's and the output's file names.
	File, Output string
	// Wrapper and Circuit are the suggested wrapper and circuit names.
	Wrapper, Circuit string
	// GRPC marks a gRPC client: a method takes ...grpc.CallOption.
	GRPC bool
	// Methods are the interface's methods.
	Methods []scaffoldMethod
	// Options are the options of the schema, with their defaults.
	Options []spec.OptionDoc
}

// scaffoldMethod is one method in the scaffold.
type scaffoldMethod struct {
	// Name is the method's name; Signature its signature, as Go.
	Name, Signature string
	// Skip marks a method that cannot be guarded: it returns neither
	// error last nor one result with Err() error.
	Skip bool
	// Close marks a Close with no parameters, which passes through unless
	// the manifest names it.
	Close bool
}

// Scaffold loads the interface source (IMPORTPATH.Name) from dir and
// renders a manifest scaffold, named file, that lists every method.
func Scaffold(dir, source, file string, tags []string) ([]byte, error) {
	i := strings.LastIndex(source, ".")
	if i <= 0 || strings.Contains(source[i:], "/") {
		return nil, fmt.Errorf("source %q must be IMPORTPATH.Interface", source)
	}
	path, name := source[:i], source[i+1:]
	prog := load.New(dir, tags)
	if err := prog.TypeCheck([]string{path}, nil); err != nil {
		return nil, err
	}
	pkg := prog.Pkg(path)
	if pkg == nil {
		return nil, fmt.Errorf("%s", prog.Missing(path))
	}
	obj, _ := pkg.Scope().Lookup(name).(*types.TypeName)
	if obj == nil {
		return nil, fmt.Errorf("no type %s in package %s", name, path)
	}
	iface, ok := obj.Type().Underlying().(*types.Interface)
	if !ok {
		return nil, fmt.Errorf("%s is not an interface type", source)
	}
	data := scaffold{
		Source: source, File: file, Output: DefaultOutput,
		Wrapper: "Guarded" + name, Circuit: kebab(name), Options: spec.Docs(),
	}
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		sig := fn.Type().(*types.Signature)
		data.Methods = append(data.Methods, scaffoldMethod{
			Name:      fn.Name(),
			Signature: fn.Name() + strings.TrimPrefix(types.TypeString(sig, (*types.Package).Name), "func"),
			Skip:      !model.IsGuardable(sig),
			Close:     fn.Name() == "Close" && sig.Params().Len() == 0,
		})
		if p := sig.Params(); sig.Variadic() && model.IsNamed(p.At(p.Len()-1).Type().(*types.Slice).Elem(), "google.golang.org/grpc", "CallOption") {
			data.GRPC = true
		}
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
