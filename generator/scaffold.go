package generator

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/load"
	"github.com/circuitgen/circuitgen/generator/internal/model"
	"github.com/circuitgen/circuitgen/generator/internal/spec"
	"github.com/circuitgen/circuitgen/generator/internal/templates"
)

// scaffold is what the scaffold templates (templates.Manifest,
// templates.Struct) render.
type scaffold struct {
	// Source is the type, as IMPORTPATH.Name.
	Source string
	// File and Output are the scaffold's and the output's file names.
	File, Output string
	// Wrapper and Circuit are the suggested wrapper and circuit names.
	Wrapper, Circuit string
	// Selection is what the scaffold proposes counts as a failure.
	Selection
	// Methods are the type's methods.
	Methods []scaffoldMethod
	// Options are the options of the schema, with their defaults.
	Options []spec.OptionDoc
	// For a struct client's Go file: Package is the package clause,
	// Imports and OtherImports the standard library's imports and the
	// others, Name the interface's name and Type the struct's pointer type
	// as the file names it (*sql.DB).
	Package, Name, Type   string
	Imports, OtherImports []string
	// self is the source type, whose own builder steps are guarded.
	self types.Type
}

// Selection is what a scaffold proposes counts as a failure, from what the
// client can return: HTTP statuses for an HTTP-shaped client, gRPC codes
// for a gRPC client, otherwise errors.
type Selection struct {
	// GRPC marks a gRPC client: a method takes ...grpc.CallOption, or
	// its package imports gRPC.
	GRPC bool
	// HTTP marks an HTTP-shaped client: a method takes an *http.Request
	// or returns a result carrying a status, or its package's errors
	// carry statuses (a StatusCode method, or a StatusCode or
	// HTTPStatusCode field).
	HTTP bool
	// Errors are the errors selected; Proposed the exported error
	// variables and constants of the client's package, offered to choose
	// from.
	Errors, Proposed []string
}

// scaffoldMethod is one method in the scaffold.
type scaffoldMethod struct {
	// Name is the method's name; Signature its signature, as Go (Method
	// its declaration in an interface, for a struct client).
	Name, Signature, Method string
	// Skip marks a method the scaffold does not guard, and Reason says
	// why: it cannot be guarded, it cannot fail, or it reads the client's
	// state rather than make a call.
	Skip   bool
	Reason string
	// Close marks a Close with no parameters, which passes through unless
	// the manifest names it.
	Close bool
}

// Scaffold loads the type source (IMPORTPATH.Name) from dir and renders a
// scaffold to edit, named file ("" for the default): for an interface, a
// manifest that lists every method; for a struct client (a named type
// with methods, such as database/sql.DB or net/http.Client), a Go file
// declaring an interface of its exported methods, the directives, and the
// assertion that the struct implements it.
func Scaffold(dir, source, file string, tags []string) (Output, error) {
	i := strings.LastIndex(source, ".")
	if i <= 0 || strings.Contains(source[i:], "/") {
		return Output{}, fmt.Errorf("source %q must be IMPORTPATH.Interface", source)
	}
	path, name := strings.TrimPrefix(source[:i], "*"), source[i+1:]
	prog := load.New(dir, tags)
	if err := prog.TypeCheck([]string{path}, nil); err != nil {
		return Output{}, err
	}
	pkg := prog.Pkg(path)
	if pkg == nil {
		return Output{}, fmt.Errorf("%s", prog.Missing(path))
	}
	obj, _ := pkg.Scope().Lookup(name).(*types.TypeName)
	if obj == nil || !obj.Exported() {
		return Output{}, fmt.Errorf("no exported type %s in package %s", name, path)
	}
	if send := model.QueueSender(methodsOf(obj.Type())); send != nil {
		return Output{}, errors.New(model.QueueRefusal(name, send.Name()))
	}
	data := scaffold{
		Source: path + "." + name, Output: DefaultOutput,
		Wrapper: "Guarded" + name, Circuit: kebab(name), Options: spec.Docs(),
		self: obj.Type(),
	}
	if types.IsInterface(obj.Type()) {
		if file == "" {
			file = ManifestFile
		}
		data.File = file
		data.scan(pkg, methodsOf(obj.Type()), (*types.Package).Name)
		var buf bytes.Buffer
		if err := templates.Manifest.Execute(&buf, data); err != nil {
			return Output{}, fmt.Errorf("render manifest: %w", err)
		}
		return Output{Path: file, Content: buf.Bytes()}, nil
	}
	return structScaffold(dir, prog, pkg, obj, file, data)
}

// structScaffold renders the Go file of a struct client: an interface of
// the exported methods of *T, to edit.
func structScaffold(dir string, prog *load.Program, pkg *types.Package, obj *types.TypeName, file string, data scaffold) (Output, error) {
	methods := slices.DeleteFunc(methodsOf(obj.Type()), func(fn *types.Func) bool { return !fn.Exported() })
	if len(methods) == 0 {
		return Output{}, fmt.Errorf("%s.%s is not an interface type and has no exported methods: nothing to guard", pkg.Path(), obj.Name())
	}
	if file == "" {
		file = strings.ToLower(obj.Name()) + ".go"
	}
	data.File, data.Name = file, obj.Name()
	data.Package = packageName(dir, prog)
	imports := map[string]string{}
	qual := func(p *types.Package) string {
		imports[p.Path()] = p.Name()
		return p.Name()
	}
	data.Type = "*" + qual(pkg) + "." + obj.Name()
	data.scan(pkg, methods, qual)
	for _, path := range slices.Sorted(maps.Keys(imports)) {
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			data.OtherImports = append(data.OtherImports, path)
		} else {
			data.Imports = append(data.Imports, path)
		}
	}
	var buf bytes.Buffer
	if err := templates.Struct.Execute(&buf, data); err != nil {
		return Output{}, fmt.Errorf("render %s: %w", file, err)
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return Output{}, fmt.Errorf("render %s: %w\n%s", file, err, buf.Bytes())
	}
	return Output{Path: file, Content: src}, nil
}

// packageName returns the name of the package in dir, or one made from
// the directory's name when it has none.
func packageName(dir string, prog *load.Program) string {
	if p, err := load.Parse(dir, []string{"."}, nil); err == nil && len(p.Roots) == 1 && p.Roots[0].Name != "" {
		return p.Roots[0].Name
	}
	abs, _ := filepath.Abs(dir)
	name := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' {
			return r
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return -1
	}, filepath.Base(abs))
	if !token.IsIdentifier(name) {
		return "client"
	}
	return name
}

// scan fills the methods and the proposed selection of a scaffold from
// the methods of the client, whose package is pkg; qual names packages.
func (d *scaffold) scan(pkg *types.Package, methods []*types.Func, qual types.Qualifier) {
	ctx := false
	for _, fn := range methods {
		sig := fn.Type().(*types.Signature)
		sigText := strings.TrimPrefix(types.TypeString(sig, qual), "func")
		reason := skipReason(fn.Name(), sig)
		if builds(sig) && types.Identical(sig.Results().At(0).Type(), d.self) {
			reason = "" // a builder's own step (Txn.If): it comes back guarded
		}
		d.Methods = append(d.Methods, scaffoldMethod{
			Name:      fn.Name(),
			Signature: fn.Name() + sigText,
			Method:    fn.Name() + sigText,
			Skip:      reason != "",
			Reason:    reason,
			Close:     fn.Name() == "Close" && sig.Params().Len() == 0,
		})
		p := sig.Params()
		if sig.Variadic() && model.IsNamed(p.At(p.Len()-1).Type().(*types.Slice).Elem(), "google.golang.org/grpc", "CallOption") {
			d.GRPC = true
		}
		if model.CarriesStatus(sig) {
			d.HTTP = true
		}
		if p.Len() > 0 && model.IsNamed(p.At(0).Type(), "context", "Context") {
			ctx = true
		}
	}
	if !d.GRPC && !d.HTTP && importsGRPC(pkg) {
		d.GRPC = true // a client over gRPC whose options are its own
	}
	if !d.GRPC && (model.DeclaresStatus(pkg) || declaresStatusField(pkg)) {
		d.HTTP = true // its errors carry statuses (the AWS SDK's)
	}
	switch {
	case d.GRPC:
		d.HTTP = false
		return
	case d.HTTP:
		// What an HTTP client returns: a transport error, or a status.
		d.Errors = append(d.Errors, "*net/url.Error")
		return
	case ctx:
		d.Errors = append(d.Errors, "context.DeadlineExceeded")
	}
	errType := types.Universe.Lookup("error").Type()
	for _, name := range pkg.Scope().Names() {
		switch obj := pkg.Scope().Lookup(name).(type) {
		case *types.Var, *types.Const: // errors.New values, and constants of an error type (kerr's KError)
			if obj.Exported() && types.AssignableTo(obj.Type(), errType) {
				d.Proposed = append(d.Proposed, qual(pkg)+"."+name)
			}
		case *types.TypeName: // error types, matched with errors.As (*ConnectionError)
			t, ok := obj.Type().(*types.Named)
			if !obj.Exported() || obj.IsAlias() || !ok || t.TypeParams().Len() > 0 || types.IsInterface(t) {
				continue
			}
			if types.AssignableTo(t, errType) {
				d.Proposed = append(d.Proposed, qual(pkg)+"."+name)
			} else if types.AssignableTo(types.NewPointer(t), errType) {
				d.Proposed = append(d.Proposed, "*"+qual(pkg)+"."+name)
			}
		}
	}
}

// importsGRPC reports whether pkg imports google.golang.org/grpc: its
// errors may carry gRPC status codes though its methods take options of
// their own.
func importsGRPC(pkg *types.Package) bool {
	for _, p := range pkg.Imports() {
		if p.Path() == "google.golang.org/grpc" || p.Path() == "google.golang.org/grpc/status" {
			return true
		}
	}
	return false
}

// declaresStatusField reports whether pkg declares an error type (a
// struct, or a pointer to one, with an Error method) with an int field
// named like an HTTP status: StatusCode or HTTPStatusCode.
func declaresStatusField(pkg *types.Package) bool {
	errType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	for _, name := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok || !types.Implements(types.NewPointer(tn.Type()), errType) {
			continue
		}
		for i := range st.NumFields() {
			f := st.Field(i)
			if b, ok := f.Type().Underlying().(*types.Basic); ok && b.Info()&types.IsInteger != 0 && (f.Name() == "StatusCode" || f.Name() == "HTTPStatusCode") {
				return true
			}
		}
	}
	return false
}

// stateReaders are the names of methods that read a client's state, its
// error or whether it is closed, when they take nothing: a connection's
// Err() error is not a call.
var stateReaders = map[string]bool{"Err": true, "Error": true, "LastError": true, "Closed": true, "IsClosed": true}

// skipReason returns why the scaffold skips the method name of signature
// sig, or "" to guard it: a stream that cannot fail, a state reader (a
// method taking nothing that is named like one, or returns no error: a
// getter), or a method that cannot be guarded.
func skipReason(name string, sig *types.Signature) string {
	res := sig.Results()
	returnsError := false
	for i := range res.Len() {
		if types.Implements(res.At(i).Type(), types.Universe.Lookup("error").Type().Underlying().(*types.Interface)) {
			returnsError = true
		}
	}
	switch {
	case model.PassesThrough(sig):
		return "it returns a stream that cannot fail: it passes through"
	case builds(sig) && model.QueueSender(methodsOf(res.At(0).Type())) != nil:
		return "it returns " + types.TypeString(res.At(0).Type(), (*types.Package).Name) + ", a queue: its commands carry no error until it sends them; guard a method that runs a whole queue instead (go-redis's Pipelined)"
	case sig.Params().Len() == 0 && res.Len() > 0 && (stateReaders[name] || !returnsError && !model.IsGuardable(sig)):
		return "it reads the client's state and makes no call; guarded, reading it would count and an open circuit would answer it"
	case model.RefusedStream(sig):
		return "it returns a client, bidi or untyped stream, which the wrapper cannot settle at its end; guard it by hand with Circuit.Allow and Ticket.Done"
	case builds(sig) && model.SentResults(sig):
		return "it returns " + types.TypeString(res.At(0).Type(), (*types.Package).Name) + ", which reads the results of this call, already sent: each read guarded on its own, a read an open circuit rejected would leave the next read another's results; guard it by hand with Circuit.Allow before the call and Ticket.Done with the reads' errors"
	case builds(sig):
		return "it returns a builder, guarded when this run guards " + types.TypeString(res.At(0).Type(), (*types.Package).Name) + " too: list it, then remove this skip; its terminal call, not this one, takes the claim"
	case !model.IsGuardable(sig):
		return "it returns neither error last nor a result that reports its error"
	}
	return ""
}

// builds reports whether a method of signature sig returns only a named
// interface that is not an error: a builder (etcd's KV.Txn), guarded when
// the run guards that interface too.
func builds(sig *types.Signature) bool {
	res := sig.Results()
	if res.Len() != 1 || model.IsGuardable(sig) {
		return false
	}
	return model.Builds(res.At(0).Type())
}

// methodsOf returns the methods of t's method set, and of *t's for a
// struct: what a scaffold of t would list.
func methodsOf(t types.Type) []*types.Func {
	if !types.IsInterface(t) {
		t = types.NewPointer(t)
	}
	mset := types.NewMethodSet(t)
	methods := make([]*types.Func, 0, mset.Len())
	for i := range mset.Len() {
		if fn, ok := mset.At(i).Obj().(*types.Func); ok {
			methods = append(methods, fn)
		}
	}
	return methods
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
