package model

import (
	"go/token"
	"go/types"
)

// WalkType calls f for t and every type t is built from, without entering
// the underlying types of named types.
func WalkType(t types.Type, f func(types.Type)) { walkType(t, f) }

func walkType(t types.Type, f func(types.Type)) {
	seen := map[types.Type]bool{}
	var walk func(t types.Type)
	walk = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		f(t)
		switch t := t.(type) {
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Array:
			walk(t.Elem())
		case *types.Map:
			walk(t.Key())
			walk(t.Elem())
		case *types.Chan:
			walk(t.Elem())
		case *types.Signature:
			walk(t.Params())
			walk(t.Results())
		case *types.Tuple:
			for i := range t.Len() {
				walk(t.At(i).Type())
			}
		case *types.Struct:
			for i := range t.NumFields() {
				walk(t.Field(i).Type())
			}
		case *types.Interface:
			for i := range t.NumExplicitMethods() {
				walk(t.ExplicitMethod(i).Type())
			}
			for i := range t.NumEmbeddeds() {
				walk(t.EmbeddedType(i))
			}
		case *types.Union:
			for i := range t.Len() {
				walk(t.Term(i).Type())
			}
		case *types.Named:
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
		case *types.Alias:
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
		}
	}
	walk(t)
}

// hasTypeParam reports whether t mentions a type parameter.
func hasTypeParam(t types.Type) bool {
	found := false
	walkType(t, func(t types.Type) {
		if _, ok := t.(*types.TypeParam); ok {
			found = true
		}
	})
	return found
}

// isContext reports whether t is context.Context.
func isContext(t types.Type) bool {
	return isNamed(t, "context", "Context")
}

// isRequest reports whether t is *net/http.Request, whose Context bounds a
// method that takes no context.Context (http.RoundTripper's RoundTrip).
func isRequest(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && isNamed(p.Elem(), "net/http", "Request")
}

// isNamed reports whether t is the named type path.name.
func isNamed(t types.Type, path, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == path && n.Obj().Name() == name
}

// IsNamed reports whether t is the named type path.name.
func IsNamed(t types.Type, path, name string) bool { return isNamed(t, path, name) }

// CarriesError reports whether t has a method Err() error.
func CarriesError(t types.Type) bool {
	return hasMethod(t, "Err", types.NewTuple(), types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType)))
}

// Settable reports whether t is a pointer to a named non-interface type
// with a method SetErr(error), so that a rejection can make one and carry
// its error.
func Settable(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok || types.IsInterface(p.Elem()) {
		return false
	}
	if _, ok := types.Unalias(p.Elem()).(*types.Named); !ok {
		return false
	}
	return hasMethod(t, "SetErr", types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType)), types.NewTuple())
}

// hasMethod reports whether t's method set has name with exactly the given
// parameters and results.
func hasMethod(t types.Type, name string, params, results *types.Tuple) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	fn, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	return types.Identical(fn.Type().(*types.Signature), types.NewSignatureType(nil, nil, nil, params, results, false))
}

// rowMethods returns the methods of t when t is an interface with a method
// Scan(...) error, a row whose Scan reports the call's error (pgx.Row), or
// nil.
func rowMethods(t types.Type) []*types.Func {
	it, ok := t.Underlying().(*types.Interface)
	if !ok || !it.IsMethodSet() {
		return nil
	}
	var ms []*types.Func
	scan := false
	for i := range it.NumMethods() {
		fn := it.Method(i)
		if !fn.Exported() {
			return nil
		}
		if res := fn.Type().(*types.Signature).Results(); fn.Name() == "Scan" && res.Len() == 1 && types.Identical(res.At(0).Type(), errorType) {
			scan = true
		}
		ms = append(ms, fn)
	}
	if !scan {
		return nil
	}
	return ms
}

// seqElem returns T when t is iter.Seq2[T, error], or nil.
func seqElem(t types.Type) types.Type {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || !isNamed(n, "iter", "Seq2") || n.TypeArgs().Len() != 2 || !types.Identical(n.TypeArgs().At(1), errorType) {
		return nil
	}
	return n.TypeArgs().At(0)
}

// errMethod returns the name of t's method that reports its error, Err()
// error or FirstErr() error, or "".
func errMethod(t types.Type) string {
	errResult := types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType))
	for _, name := range []string{"Err", "FirstErr"} {
		if hasMethod(t, name, types.NewTuple(), errResult) {
			return name
		}
	}
	return ""
}

// rejecter returns how a result of type t, which reports its error but
// cannot be set, is made to carry a rejection: a *database/sql.Row made by
// the file's helper, a func(error) T of t's package, or one element of a
// slice of structs with an Err error field.
func rejecter(t types.Type) (Reject, bool) {
	if p, ok := types.Unalias(t).(*types.Pointer); ok && isNamed(p.Elem(), "database/sql", "Row") {
		return Reject{SQLRow: true}, true
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil && n.TypeArgs().Len() == 0 {
		want := types.NewSignatureType(nil, nil, nil, types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType)), types.NewTuple(types.NewParam(token.NoPos, nil, "", t)), false)
		scope := n.Obj().Pkg().Scope()
		var found *types.Func
		for _, name := range scope.Names() {
			if fn, ok := scope.Lookup(name).(*types.Func); ok && fn.Exported() && types.Identical(fn.Type(), want) {
				if found != nil {
					found = nil // two: neither is the obvious one
					break
				}
				found = fn
			}
		}
		if found != nil {
			return Reject{Func: found}, true
		}
	}
	if sl, ok := t.Underlying().(*types.Slice); ok {
		if st, ok := sl.Elem().Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				if f := st.Field(i); f.Name() == "Err" && f.Exported() && types.Identical(f.Type(), errorType) {
					return Reject{Slice: true}, true
				}
			}
		}
	}
	return Reject{}, false
}

// CarriesStatus reports whether a method of signature sig is HTTP-shaped:
// it takes an *http.Request, or a result of it carries an HTTP status (an
// *http.Response, a StatusCode() int), so that statuses= can match.
func CarriesStatus(sig *types.Signature) bool {
	for i := range sig.Params().Len() {
		if isRequest(sig.Params().At(i).Type()) {
			return true
		}
	}
	for i := range sig.Results().Len() {
		if statusKind(sig.Results().At(i).Type()) != NoStatus {
			return true
		}
	}
	return false
}
