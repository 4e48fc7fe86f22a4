package generator

import (
	"bytes"
	"fmt"
	"go/token"
	"go/types"
	"strings"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
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
	// GRPC marks a gRPC client: a method takes ...grpc.CallOption.
	GRPC bool
	// Methods are the interface's methods.
	Methods []ScaffoldMethod
	// Options are the options of the schema, with their defaults.
	Options []OptionDoc
}

// ScaffoldMethod is one method in the scaffold.
type ScaffoldMethod struct {
	// Name is the method's name; Signature its signature, as Go.
	Name, Signature string
	// Skip marks a method that cannot be guarded: it returns neither
	// error last nor one result with Err() error.
	Skip bool
	// Close marks a Close with no parameters, which passes through unless
	// the manifest names it.
	Close bool
}

// OptionDoc documents one option of the schema.
type OptionDoc struct {
	// Name is the option's key; Value describes its value.
	Name, Value string
	// Doc says what it does.
	Doc string
	// Levels says where it may be given.
	Levels string
	// Policy marks an option of circuit.Policy; Default is its value in
	// circuit.DefaultPolicy ("off" when zero).
	Policy  bool
	Default string
	// Supported is false for an option circuitgen reads but cannot apply
	// yet.
	Supported bool
}

// Options documents every option of the schema, in order.
func Options() []OptionDoc {
	docs := make([]OptionDoc, len(schema))
	for i, k := range schema {
		d := OptionDoc{Name: k.Name, Value: k.Value, Doc: k.Doc, Policy: k.Field != "", Supported: k.Field == "" || k.set != nil}
		var where []string
		for _, l := range []level{atDefaults, atInterface, atMethod} {
			if k.Levels&l != 0 {
				where = append(where, map[level]string{atDefaults: "defaults", atInterface: "interface", atMethod: "method"}[l])
			}
		}
		d.Levels = strings.Join(where, ", ")
		if d.Policy {
			d.Default = "off"
			switch v := fieldValue(circuit.DefaultPolicy, k.Field).(type) {
			case int:
				if v != 0 {
					d.Default = fmt.Sprint(v)
				}
			case float64:
				if v != 0 {
					d.Default = fmt.Sprint(v)
				}
			case time.Duration:
				if v != 0 {
					d.Default = v.String()
				}
			}
		}
		docs[i] = d
	}
	return docs
}

// Scaffold loads the interface source (IMPORTPATH.Name) from dir and
// renders a manifest scaffold, named file, that lists every method.
func Scaffold(dir, source, file string, tags []string) ([]byte, error) {
	i := strings.LastIndex(source, ".")
	if i <= 0 || strings.Contains(source[i:], "/") {
		return nil, fmt.Errorf("source %q must be IMPORTPATH.Interface", source)
	}
	path, name := source[:i], source[i+1:]
	l := newLoaded(token.NewFileSet(), nil)
	if err := l.more(dir, []string{path}, tags); err != nil {
		return nil, err
	}
	pkg := l.pkg(path)
	if pkg == nil {
		return nil, fmt.Errorf("%s", l.missing(path))
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
		Wrapper: "Guarded" + name, Circuit: kebab(name), Options: Options(),
	}
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		sig := fn.Type().(*types.Signature)
		res := sig.Results()
		guardable := res.Len() > 0 && types.Identical(res.At(res.Len()-1).Type(), errorType) ||
			res.Len() == 1 && carriesError(res.At(0).Type()) && settable(res.At(0).Type())
		data.Methods = append(data.Methods, ScaffoldMethod{
			Name:      fn.Name(),
			Signature: fn.Name() + strings.TrimPrefix(types.TypeString(sig, (*types.Package).Name), "func"),
			Skip:      !guardable,
			Close:     fn.Name() == "Close" && sig.Params().Len() == 0,
		})
		if p := sig.Params(); sig.Variadic() && isNamed(p.At(p.Len()-1).Type().(*types.Slice).Elem(), "google.golang.org/grpc", "CallOption") {
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
