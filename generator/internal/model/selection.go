package model

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// warnSelection warns of each selection of method m that can match
// nothing it can return, whatever else is selected: statuses= on a method
// whose results carry no status, of a client whose packages (clientPkgs,
// each read whole) declare no error with StatusCode() int or
// HTTPStatusCode() int nor one holding a status a classifier can read
// (statusErrors); codes= on a client whose
// packages do not use gRPC. errors= and classifier= are taken as able to
// match. When no selection of m can match, its circuit can never open;
// otherwise the warning names the selections that can. client is the
// package declaring the method.
func (b *builder) warnSelection(s *spec.Interface, m *Method, sig *types.Signature, o *spec.Options, client *types.Package, where token.Position) {
	c := m.Classify
	if c.Func != nil {
		return
	}
	pkgs := b.clientPkgs(client, m)
	// A package read only in part, as a dependency of another's export
	// data (smithy-go's transport/http beneath service/s3), may declare
	// an error with a status: it is taken as able to match.
	partial := slices.ContainsFunc(pkgs, func(p *types.Package) bool {
		return !p.Complete() && strings.Contains(strings.Split(p.Path(), "/")[0], ".")
	})
	statuses := len(c.Statuses) > 0 && (CarriesStatus(sig) || b.declares(pkgs, "StatusCode", "HTTPStatusCode") || len(c.StatusErrors) > 0 || partial)
	codes := len(c.Codes) > 0 && slices.ContainsFunc(pkgs, func(p *types.Package) bool { return strings.HasPrefix(p.Path(), "google.golang.org/grpc") })
	var live []string
	if len(c.Errors) > 0 {
		live = append(live, "errors=")
	}
	if statuses {
		live = append(live, "statuses=")
	}
	if codes {
		live = append(live, "codes=")
	}
	warn := func(set bool, pos token.Position, key, what, why string) {
		if !set {
			pos = where
		}
		if len(live) == 0 {
			b.errs.Warn(pos, "circuit %s can never open: %s selects %s, which nothing %s.%s returns can match (%s); select the errors it returns with errors=",
				m.Field.Circuit.Name, key, what, s.Name, m.Name, why)
			return
		}
		b.errs.Warn(pos, "circuit %s opens only on its %s: %s selects %s, which nothing %s.%s returns can match (%s); drop %[3]s, or add the errors it returns to errors=",
			m.Field.Circuit.Name, strings.Join(live, " and "), key, what, s.Name, m.Name, why)
	}
	if len(c.Statuses) > 0 && !statuses {
		why := "no result carries an HTTP status and no error of its packages has StatusCode() or HTTPStatusCode()"
		if _, hidden := b.statusErrors(client, m); len(hidden) > 0 {
			why = "no result carries an HTTP status, and " + strings.Join(hidden, "; ")
		}
		warn(o.Statuses.Set, o.Statuses.Pos, "statuses=", "HTTP statuses", why)
	}
	if len(c.Codes) > 0 && !codes {
		warn(o.Codes.Set, o.Codes.Pos, "codes=", "gRPC codes", "none of its packages uses gRPC")
	}
}

// clientPkgs returns the packages whose errors the method m, declared in
// package client, may return: its own (the target's, client's, and those
// of the types its signature names, as service/s3 for an interface of
// *s3.Client's methods), then those they import.
func (b *builder) clientPkgs(client *types.Package, m *Method) []*types.Package {
	pkgs := []*types.Package{b.home}
	add := func(p *types.Package) {
		if p != nil && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	add(client)
	for _, v := range slices.Concat(m.Params, m.Results) {
		walkType(v.Type, func(t types.Type) {
			if n, ok := types.Unalias(t).(*types.Named); ok {
				add(n.Obj().Pkg())
			}
		})
	}
	for _, p := range pkgs[:len(pkgs):len(pkgs)] {
		for _, imp := range p.Imports() {
			add(imp)
		}
	}
	return pkgs
}

// ownPkg reports whether p is one of the packages of the method m,
// declared in client, that clientPkgs lists before their imports.
func (b *builder) ownPkg(p, client *types.Package, m *Method) bool {
	if p == b.home || p == client {
		return true
	}
	own := false
	for _, v := range slices.Concat(m.Params, m.Results) {
		walkType(v.Type, func(t types.Type) {
			if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() == p {
				own = true
			}
		})
	}
	return own
}

// statusNames are the names of the int field, or the method returning
// int, in which an error type holds an HTTP status, in the order they
// are looked for.
var statusNames = []string{"StatusCode", "HTTPStatusCode", "Code"}

// statusErrors returns the error types that a method declared in package
// client may return (clientPkgs) and that hold an HTTP status where
// circuit.ErrorStatus does not read it: an int field StatusCode,
// HTTPStatusCode or Code, or a method Code() int, for a classifier to
// read after errors.As. It returns too, for each such type the target
// package cannot name, why statuses= cannot read it. The standard
// library's packages are searched only as the client's own: an int Code
// there is no HTTP status (net/textproto.Error's).
func (b *builder) statusErrors(client *types.Package, m *Method) ([]StatusError, []string) {
	var found []StatusError
	var hidden []string
	for _, p := range b.clientPkgs(client, m) {
		if !strings.Contains(strings.Split(p.Path(), "/")[0], ".") && !b.ownPkg(p, client, m) {
			continue
		}
		key := b.home.Path() + ";" + p.Path()
		scan, ok := b.Run.statusErrs[key]
		if !ok {
			scan = b.scanStatusErrors(p)
			b.Run.statusErrs[key] = scan
		}
		found = append(found, scan.found...)
		hidden = append(hidden, scan.hidden...)
	}
	return found, hidden
}

// statusScan is what statusErrors finds in one package.
type statusScan struct {
	found  []StatusError
	hidden []string
}

// scanStatusErrors finds the error types of p that statusErrors returns.
func (b *builder) scanStatusErrors(p *types.Package) statusScan {
	var scan statusScan
	scope := p.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) {
			continue
		}
		if n, ok := tn.Type().(*types.Named); ok && n.TypeParams() != nil {
			continue
		}
		t := tn.Type()
		if !types.Implements(t, errorIface) {
			if t = types.NewPointer(t); !types.Implements(t, errorIface) {
				continue
			}
		}
		if intMethod(t, "StatusCode") || intMethod(t, "HTTPStatusCode") {
			continue // circuit.ErrorStatus reads it
		}
		e, ok := statusRead(t, p)
		if !ok {
			continue
		}
		read := e.Read
		if e.Method {
			read += "()"
		}
		switch {
		case p == b.home:
		case !tn.Exported():
			scan.hidden = append(scan.hidden, fmt.Sprintf("%s holds one in %s, but is unexported: a classifier cannot errors.As to it", types.TypeString(t, b.qualifier), read))
			continue
		case !importable(p.Path(), b.home.Path()):
			scan.hidden = append(scan.hidden, fmt.Sprintf("%s holds one in %s, but its package is internal: a classifier cannot errors.As to it", types.TypeString(t, b.qualifier), read))
			continue
		}
		scan.found = append(scan.found, e)
	}
	return scan
}

// statusRead returns how a value of the error type t of package p holds
// an HTTP status: the first of statusNames that is an int field, or a
// method Code() int.
func statusRead(t types.Type, p *types.Package) (StatusError, bool) {
	for _, name := range statusNames {
		obj, _, _ := types.LookupFieldOrMethod(t, true, p, name)
		switch obj := obj.(type) {
		case *types.Var:
			if obj.IsField() && types.Identical(obj.Type(), types.Typ[types.Int]) {
				return StatusError{Type: t, Read: name}, true
			}
		case *types.Func:
			if intMethod(t, name) {
				return StatusError{Type: t, Read: name, Method: true}, true
			}
		}
	}
	return StatusError{}, false
}

// intMethod reports whether t has a method name() int.
func intMethod(t types.Type, name string) bool {
	return hasMethod(t, name, types.NewTuple(), types.NewTuple(types.NewParam(token.NoPos, nil, "", types.Typ[types.Int])))
}

// declares reports whether a package of pkgs declares a type with one of
// the methods named, with no parameters, on it or its pointer.
func (b *builder) declares(pkgs []*types.Package, methods ...string) bool {
	for _, p := range pkgs {
		key := p.Path() + ";" + strings.Join(methods, ",")
		found, ok := b.Run.declared[key]
		if !ok {
			found = declaresMethod(p, methods...)
			b.Run.declared[key] = found
		}
		if found {
			return true
		}
	}
	return false
}

// DeclaresStatus reports whether pkg, or a package it imports, declares
// an error that can carry an HTTP status: a type with StatusCode() or
// HTTPStatusCode() (the AWS SDK's smithy-go ResponseError).
func DeclaresStatus(pkg *types.Package) bool {
	for _, p := range append([]*types.Package{pkg}, pkg.Imports()...) {
		if declaresMethod(p, "StatusCode", "HTTPStatusCode") {
			return true
		}
	}
	return false
}

// declaresMethod reports whether p declares a type with one of the methods
// named, with no parameters, on it or its pointer.
func declaresMethod(p *types.Package, methods ...string) bool {
	scope := p.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		for _, method := range methods {
			obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, p, method)
			if fn, ok := obj.(*types.Func); ok && fn.Type().(*types.Signature).Params().Len() == 0 {
				return true
			}
		}
	}
	return false
}
