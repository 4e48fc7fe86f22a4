package model

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"
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

// readerIface is io.Reader's method set.
var readerIface = types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, "Read", types.NewSignatureType(nil, nil, nil,
	types.NewTuple(types.NewParam(token.NoPos, nil, "p", types.NewSlice(types.Typ[types.Byte]))),
	types.NewTuple(types.NewParam(token.NoPos, nil, "n", types.Typ[types.Int]), types.NewParam(token.NoPos, nil, "err", errorType)), false))}, nil).Complete()

// isReader reports whether t is an interface or a pointer that implements
// io.Reader (io.Reader, io.ReadCloser, *bytes.Reader): a body that can be
// nil, which a call may read.
func isReader(t types.Type) bool {
	_, ptr := t.Underlying().(*types.Pointer)
	return (ptr || types.IsInterface(t)) && types.Implements(t, readerIface)
}

// IsResponse reports whether t is *net/http.Response.
func IsResponse(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && isNamed(p.Elem(), "net/http", "Response")
}

// isNamed reports whether t is the named type path.name.
func isNamed(t types.Type, path, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == path && n.Obj().Name() == name
}

// IsNamed reports whether t is the named type path.name.
func IsNamed(t types.Type, path, name string) bool { return isNamed(t, path, name) }

// CarriesError reports whether t reports its error with a method Err()
// error, Error() error or FirstErr() error.
func CarriesError(t types.Type) bool { return errMethod(t) != "" }

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
	return hasSetErr(t)
}

// hasSetErr reports whether t's method set has SetErr(error).
func hasSetErr(t types.Type) bool {
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
	ms, ok := interfaceMethods(t)
	if !ok {
		return nil
	}
	for _, fn := range ms {
		if res := fn.Type().(*types.Signature).Results(); fn.Name() == "Scan" && res.Len() == 1 && types.Identical(res.At(0).Type(), errorType) {
			return ms
		}
	}
	return nil
}

// hasScan reports whether t's method set has Scan(...) error, as a row's.
func hasScan(t types.Type) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, "Scan")
	fn, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	res := fn.Type().(*types.Signature).Results()
	return res.Len() == 1 && types.Identical(res.At(0).Type(), errorType)
}

// Builds reports whether t may be a builder (etcd's clientv3.Txn): a named
// interface that is not an error, guarded when the run guards it too.
func Builds(t types.Type) bool {
	_, named := types.Unalias(t).(*types.Named)
	return named && types.IsInterface(t) && !types.Implements(t, errorIface)
}

// QueueSender returns the method of methods that sends the commands the
// others queue, as go-redis's Pipeliner.Exec does, or nil: it takes only a
// context.Context and returns ([]X, error), X an interface of commands
// that carry their error (Err() error and SetErr(error)). A queued command
// carries no error until the sender has run, and a sender of an empty
// queue sends nothing: no method of a queue can be guarded.
func QueueSender(methods []*types.Func) *types.Func {
	for _, send := range methods {
		sig := send.Type().(*types.Signature)
		res := sig.Results()
		if sig.Params().Len() != 1 || !isContext(sig.Params().At(0).Type()) || res.Len() != 2 || !types.Identical(res.At(1).Type(), errorType) {
			continue
		}
		if s, ok := res.At(0).Type().Underlying().(*types.Slice); ok && types.IsInterface(s.Elem()) && CarriesError(s.Elem()) && hasSetErr(s.Elem()) {
			return send
		}
	}
	return nil
}

// QueueRefusal says why the queue named iface, whose sender is send, is
// not guarded, and what to guard instead.
func QueueRefusal(iface, send string) string {
	return fmt.Sprintf("interface %s is a queue: %s sends the commands its other methods queue; a queued command carries no error until then, and %[2]s of an empty queue sends nothing, so no method of %[1]s can be guarded; guard a method that runs a whole queue instead (go-redis's Pipelined), and skip one that returns %[1]s", iface, send)
}

// SentResults reports whether a method of signature sig, which takes a
// context.Context, returns only an interface that is no error and has no
// step (a method returning it again, as a builder's If does): its methods
// read the results of the call, already sent, as pgx's SendBatch returns
// BatchResults. Each read admitted on its own, an open circuit would
// reject reading a sent call's results, and the next read would get
// another statement's.
func SentResults(sig *types.Signature) bool {
	takesCtx := false
	for i := range sig.Params().Len() {
		takesCtx = takesCtx || isContext(sig.Params().At(i).Type())
	}
	return takesCtx && sig.Results().Len() == 1 && sentResults(sig.Results().At(0).Type())
}

// sentResults reports whether t, the only result of a method taking a
// context.Context, reads that call's results, as SentResults says.
func sentResults(t types.Type) bool {
	return types.IsInterface(t) && !types.Implements(t, errorIface) && !hasStep(t)
}

// hasStep reports whether the interface t has a method returning t, or
// another instance of its generic type: a builder's step.
func hasStep(t types.Type) bool {
	self := func(r types.Type) bool {
		if types.Identical(r, t) {
			return true
		}
		a, ok1 := types.Unalias(r).(*types.Named)
		b, ok2 := types.Unalias(t).(*types.Named)
		return ok1 && ok2 && a.Origin().Obj() == b.Origin().Obj()
	}
	ms, _ := t.Underlying().(*types.Interface)
	for i := range ms.NumMethods() {
		res := ms.Method(i).Type().(*types.Signature).Results()
		for j := range res.Len() {
			if self(res.At(j).Type()) {
				return true
			}
		}
	}
	return false
}

// interfaceMethods returns the methods of t when t is an interface whose
// methods are all exported, which a type of any package can implement by
// forwarding each, and whether it is.
func interfaceMethods(t types.Type) ([]*types.Func, bool) {
	it, ok := t.Underlying().(*types.Interface)
	if !ok || !it.IsMethodSet() {
		return nil, false
	}
	var ms []*types.Func
	for i := range it.NumMethods() {
		fn := it.Method(i)
		if !fn.Exported() {
			return nil, false
		}
		ms = append(ms, fn)
	}
	return ms, true
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
// error, Error() error or FirstErr() error, or "".
func errMethod(t types.Type) string {
	errResult := types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType))
	for _, name := range []string{"Err", "Error", "FirstErr"} {
		if hasMethod(t, name, types.NewTuple(), errResult) {
			return name
		}
	}
	return ""
}

// rejecter returns how a result of type t, which reports its error but
// cannot be set, is made to carry a rejection: a *database/sql.Row made by
// the file's helper, a constructor of t's package (constructor), or one
// element of a slice of structs with an Err error field. When there is
// none, tied are the constructors constructor could not choose between.
func rejecter(t types.Type) (r Reject, ok bool, tied []*types.Func) {
	if p, ok := types.Unalias(t).(*types.Pointer); ok && isNamed(p.Elem(), "database/sql", "Row") {
		return Reject{SQLRow: true}, true, nil
	}
	fn, tied := constructor(t)
	if fn != nil {
		return Reject{Func: fn}, true, nil
	}
	if sl, ok := t.Underlying().(*types.Slice); ok {
		if st, ok := sl.Elem().Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				if f := st.Field(i); f.Name() == "Err" && f.Exported() && types.Identical(f.Type(), errorType) {
					return Reject{Slice: true}, true, nil
				}
			}
		}
	}
	return Reject{}, false, tied
}

// constructor returns the function of the package of t (a named type, or
// a pointer to one) that makes a T carrying an error, for a rejection: an
// exported function, not generic, whose only result is T and whose
// parameters include exactly one error, every other one of a type whose
// zero value the wrapper can write (a basic type, a pointer, slice, map,
// channel, function or interface, or an exported named struct or array);
// a final variadic parameter is left empty. The generator passes the
// rejection as the error, struct{}{} as an any (a document, which may not
// be nil), and zero values as the others. Of several, it takes the one
// with the fewest parameters (func(error) T first); when two or more tie
// there, it takes none, and returns them.
func constructor(t types.Type) (*types.Func, []*types.Func) {
	base := types.Unalias(t)
	if p, ok := base.(*types.Pointer); ok {
		base = types.Unalias(p.Elem())
	}
	n, ok := base.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.TypeArgs().Len() > 0 {
		return nil, nil
	}
	scope := n.Obj().Pkg().Scope()
	var best []*types.Func
	least := -1
	for _, name := range scope.Names() {
		fn, ok := scope.Lookup(name).(*types.Func)
		if !ok || !fn.Exported() || !makesFromError(fn, t) {
			continue
		}
		switch k := fn.Type().(*types.Signature).Params().Len(); {
		case least < 0 || k < least:
			best, least = []*types.Func{fn}, k
		case k == least:
			best = append(best, fn)
		}
	}
	if len(best) != 1 {
		return nil, best
	}
	return best[0], nil
}

// makesFromError reports whether fn is a constructor of a T from an error,
// as constructor says.
func makesFromError(fn *types.Func, t types.Type) bool {
	sig := fn.Type().(*types.Signature)
	if sig.TypeParams() != nil || sig.Results().Len() != 1 || !types.Identical(sig.Results().At(0).Type(), t) {
		return false
	}
	errs := 0
	params := sig.Params()
	for i := range params.Len() {
		pt := params.At(i).Type()
		switch {
		case sig.Variadic() && i == params.Len()-1:
		case types.Identical(pt, errorType):
			errs++
		case !zeroable(pt):
			return false
		}
	}
	return errs == 1
}

// zeroable reports whether the wrapper can write the zero value of t in
// any package: a literal, nil, or T{} for an exported named struct or
// array.
func zeroable(t types.Type) bool {
	if hasTypeParam(t) {
		return false
	}
	switch t.Underlying().(type) {
	case *types.Basic, *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		return true
	case *types.Struct, *types.Array:
		n, ok := types.Unalias(t).(*types.Named)
		return ok && n.Obj().Exported() && n.Obj().Pkg() != nil && !strings.Contains(n.Obj().Pkg().Path(), "internal")
	}
	return false
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

// StreamKind is what a value's methods make of it as a stream.
type StreamKind int

const (
	// NoStream: it has neither Recv() (T, error) nor CloseAndRecv.
	NoStream StreamKind = iota
	// ServerStream: Recv() (T, error), and no Send or CloseAndRecv
	// (grpc.ServerStreamingClient[T]).
	ServerStream
	// ClientStream: Send and CloseAndRecv() (T, error)
	// (grpc.ClientStreamingClient[Req, Res]).
	ClientStream
	// BidiStream: Send and Recv() (T, error)
	// (grpc.BidiStreamingClient[Req, Res]).
	BidiStream
	// UntypedStream: RecvMsg(any) error and no Recv, a stream of any
	// direction (grpc.ClientStream, which NewStream returns).
	UntypedStream
)

// streamKind returns what t is as a stream, by its method set.
func streamKind(t types.Type) StreamKind {
	recv := hasRecv(t, "Recv")
	closeAndRecv := hasRecv(t, "CloseAndRecv")
	send, _, _ := types.LookupFieldOrMethod(t, true, nil, "Send")
	_, sends := send.(*types.Func)
	switch {
	case sends && closeAndRecv:
		return ClientStream
	case sends && recv:
		return BidiStream
	case recv && !closeAndRecv:
		return ServerStream
	case !recv && !closeAndRecv && hasRecvMsg(t):
		return UntypedStream
	}
	return NoStream
}

// hasRecvMsg reports whether t has grpc.ClientStream's RecvMsg(m any) error.
func hasRecvMsg(t types.Type) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, "RecvMsg")
	fn, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	sig := fn.Type().(*types.Signature)
	return sig.Params().Len() == 1 && types.IsInterface(sig.Params().At(0).Type()) &&
		sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), errorType)
}

// hasRecv reports whether t has a method name() (T, error), as a stream's
// Recv is.
func hasRecv(t types.Type, name string) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	fn, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	return isRecvSig(fn)
}

// isRecvSig reports whether fn has the signature of a stream's Recv: no
// parameters, and (T, error).
func isRecvSig(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	return sig.Params().Len() == 0 && sig.Results().Len() == 2 && types.Identical(sig.Results().At(1).Type(), errorType)
}

// streamResult returns the stream kind of a method's results: that of S
// for (S, error), or NoStream.
func streamResult(res *types.Tuple) StreamKind {
	if res.Len() != 2 || !types.Identical(res.At(1).Type(), errorType) {
		return NoStream
	}
	return streamKind(res.At(0).Type())
}

// Cursor reports whether the row type ranges over rows, as pgx.Rows does:
// it has Next() bool and Err() error.
func (r *RowType) Cursor() bool {
	return slices.ContainsFunc(r.Methods, IsNextMethod) && slices.ContainsFunc(r.Methods, IsErrMethod)
}

// IsErrMethod reports whether fn is Err() error.
func IsErrMethod(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	return fn.Name() == "Err" && sig.Params().Len() == 0 && sig.Results().Len() == 1 &&
		types.Identical(sig.Results().At(0).Type(), errorType)
}

// IsNextMethod reports whether fn is Next() bool.
func IsNextMethod(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	return fn.Name() == "Next" && sig.Params().Len() == 0 && sig.Results().Len() == 1 &&
		types.Identical(sig.Results().At(0).Type(), types.Typ[types.Bool])
}
