package model

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// warnSelection warns when what method m selects can match nothing it
// can return, so that its circuit can never open: statuses= on a method
// whose results carry no status, of a client whose packages declare no
// error with StatusCode() int or HTTPStatusCode() int; codes= on a client
// whose packages do not use gRPC. errors= and classifier= are taken as
// able to match. client is the package declaring the method.
func (b *builder) warnSelection(s *spec.Interface, m *Method, sig *types.Signature, o *spec.Options, client *types.Package, where token.Position) {
	c := m.Classify
	if c.Func != nil || len(c.Errors) > 0 {
		return
	}
	pkgs := []*types.Package{b.home}
	if client != nil && client != b.home {
		pkgs = append(pkgs, client)
	}
	for _, p := range pkgs[:len(pkgs):len(pkgs)] {
		pkgs = append(pkgs, p.Imports()...)
	}
	if len(c.Statuses) > 0 && (CarriesStatus(sig) || b.declares(pkgs, "StatusCode", "HTTPStatusCode")) {
		return
	}
	if len(c.Codes) > 0 && slices.ContainsFunc(pkgs, func(p *types.Package) bool { return strings.HasPrefix(p.Path(), "google.golang.org/grpc") }) {
		return
	}
	pos := where
	switch {
	case o.Statuses.Set:
		pos = o.Statuses.Pos
	case o.Codes.Set:
		pos = o.Codes.Pos
	}
	what := "no result carries an HTTP status and no error of its packages has StatusCode() or HTTPStatusCode()"
	if len(c.Statuses) == 0 {
		what = "none of its packages uses gRPC"
	}
	b.errs.Warn(pos, "circuit %s can never open: %s selects %s, which nothing %s.%s returns can match (%s); select the errors it returns with errors=",
		m.Field.Circuit.Name, strings.TrimSuffix(describeSelection(c), " "), selectionWord(c), s.Name, m.Name, what)
}

// describeSelection names the keys a classifier's selection comes from.
func describeSelection(c *Classifier) string {
	if len(c.Statuses) > 0 {
		return "statuses="
	}
	return "codes="
}

// selectionWord says what the selection is, in a word.
func selectionWord(c *Classifier) string {
	if len(c.Statuses) > 0 {
		return "HTTP statuses"
	}
	return "gRPC codes"
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
