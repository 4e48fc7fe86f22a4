package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// errorType is the universe's error.
var errorType = types.Universe.Lookup("error").Type()

// method builds one method; it returns nil when the method is in error.
// opts are the interface's options over the defaults.
func (b *builder) method(s *spec.Interface, fn *types.Func, ms *spec.Method, opts spec.Options, file *ast.File) *Method {
	sig := fn.Type().(*types.Signature)
	m := &Method{Name: fn.Name(), Variadic: sig.Variadic(), Ctx: -1, Request: -1}
	where := ms.Pos
	ok := true
	for i := range sig.Params().Len() {
		v := sig.Params().At(i)
		m.Params = append(m.Params, Var{Declared: v.Name(), Type: v.Type()})
		ok = b.checkType(where, fn, v.Type()) && ok
	}
	for i := range sig.Results().Len() {
		v := sig.Results().At(i)
		m.Results = append(m.Results, Var{Declared: v.Name(), Type: v.Type()})
		ok = b.checkType(where, fn, v.Type()) && ok
	}
	if !ok {
		return nil
	}
	if ms.Skip {
		m.Skip = true
		return m
	}
	if !b.errorResult(s, m, where) {
		return nil
	}
	m.Ctx = slices.IndexFunc(m.Params, func(v Var) bool { return isContext(v.Type) })
	m.Request = slices.IndexFunc(m.Params, func(v Var) bool { return isRequest(v.Type) })
	for i, v := range m.Params {
		if isReader(v.Type) {
			m.Readers = append(m.Readers, i)
		}
	}
	o := ms.Opts.Over(opts)
	switch {
	case !o.Circuit.Set:
		b.errs.Add(where, "method %s.%s has no circuit: add %scircuit NAME, circuit= to the interface, or %sskip", s.Name, fn.Name(), spec.DirectivePrefix, spec.DirectivePrefix)
		return nil
	case o.Circuit.Bad:
		return nil
	}
	p, ok := b.policy(&o, where)
	if !ok {
		return nil
	}
	c := b.circuit(o.Circuit.Val, p, where)
	if m.Shape == Builder {
		return b.builderMethod(s, m, c, &o, where)
	}
	m.Classify = b.classifier(s, m, &o, file, fn.Pkg(), where)
	if c == nil || m.Classify == nil {
		return nil
	}
	m.Field = &Field{Circuit: c}
	m.guardReturned = !o.GuardReturned.Set || o.GuardReturned.Val
	if !b.fallbackMode(s, m, &o, where) {
		return nil
	}
	b.warnSelection(s, m, sig, &o, fn.Pkg(), where)
	b.warnSlowReader(s, m, p, &o, where)
	if m.Classify.iface == "" {
		m.Classify.iface, m.Classify.method = s.Name, m.Name
	}
	if !slices.Contains(m.Classify.Circuits, c.Name) {
		m.Classify.Circuits = append(m.Classify.Circuits, c.Name)
	}
	return m
}

// builderMethod finishes the Builder m of circuit c: it takes no claim, so
// it has no classifier and no fallback, and returns its result guarded on
// c's Breaker unless guard_returned=false, which would return the raw
// builder and is an error.
func (b *builder) builderMethod(s *spec.Interface, m *Method, c *Circuit, o *spec.Options, where token.Position) *Method {
	if c == nil {
		return nil
	}
	if o.GuardReturned.Set && !o.GuardReturned.Val {
		b.errs.Add(where, "method %s.%s returns %s, a builder this run guards, and guard_returned=false would return it unguarded, so its terminal call would never reach a circuit; remove guard_returned=false, or mark it skip",
			s.Name, m.Name, types.TypeString(m.Results[0].Type, b.qualifier))
		return nil
	}
	m.Field, m.guardReturned = &Field{Circuit: c}, true
	return m
}

// errorResult checks that m reports its error, and sets its shape: error
// last, or one result that carries it (Err() error or Error() error, and
// SetErr(error) for a rejection), reports it later (a row's Scan, an
// iter.Seq2[T, error]), or reports it with Err() error, Error() error or
// FirstErr() error and can be made to carry a rejection (rejecter).
func (b *builder) errorResult(s *spec.Interface, m *Method, where token.Position) bool {
	n := len(m.Results)
	if n == 2 && streamResult(resultTuple(m)) != NoStream {
		return b.stream(s, m, where)
	}
	if n == 2 && types.Identical(m.Results[1].Type, errorType) && rowMethods(m.Results[0].Type) != nil && !hasTypeParam(m.Results[0].Type) {
		// (R, error), R a row or cursor (pgx's Query): an error at open
		// settles the call, else the row does, as a row alone does.
		m.Shape, m.Row = Row, &RowType{Iface: m.Results[0].Type, Methods: rowMethods(m.Results[0].Type)}
		return true
	}
	if n == 2 && types.Identical(m.Results[1].Type, errorType) && seqElem(m.Results[0].Type) != nil {
		// (iter.Seq2[T, error], error): an error at open settles the
		// call, else the iteration does, as an iterator alone does.
		m.Shape, m.Elem = Seq, seqElem(m.Results[0].Type)
		return true
	}
	if n > 0 && types.Identical(m.Results[n-1].Type, errorType) {
		m.Shape = ErrorLast
		return true
	}
	if n != 1 {
		if b.concreteError(s, m, where) {
			return false
		}
		b.errs.Add(where, "method %s.%s does not return error last: a guarded method must, or return one result that reports its error (Err() error, a row's Scan, iter.Seq2[T, error]); mark it skip to pass it through", s.Name, m.Name)
		return false
	}
	t := m.Results[0].Type
	switch {
	case b.guards(t):
		m.Shape = Builder
	case CarriesError(t) && Settable(t):
		m.Shape, m.ErrMethod = Carrier, errMethod(t)
	case rowMethods(t) != nil:
		m.Shape, m.Row = Row, &RowType{Iface: t, Methods: rowMethods(t)}
	case seqElem(t) != nil:
		m.Shape, m.Elem = Seq, seqElem(t)
	case errMethod(t) != "":
		m.Shape, m.ErrMethod = Reported, errMethod(t)
		reject, ok, tied := rejecter(t)
		if !ok {
			b.errs.Add(where, "method %s.%s returns %s, which reports its error with %s() but cannot carry a rejection: %s; %s",
				s.Name, m.Name, types.TypeString(t, b.qualifier), m.ErrMethod, b.noRejecter(t, tied), b.noRejecterWay(t))
			return false
		}
		m.Reject = reject
	case failingSeq(t) != nil:
		b.errs.Add(where, "method %s.%s returns %s, a stream that can fail with %s: only iter.Seq2[T, error], its error last, is guarded; return that, or mark it skip",
			s.Name, m.Name, types.TypeString(t, b.qualifier), types.TypeString(failingSeq(t), b.qualifier))
		return false
	case b.concreteError(s, m, where):
		return false
	case !types.IsInterface(t) && hasScan(t):
		b.errs.Add(where, "method %s.%s returns %s, a row of a concrete type: its error surfaces at Scan, but the wrapper cannot return a %[3]s of its own that settles the call there; it is guarded when %[3]s reports its error with Err() error or Error() error and its package has a constructor from an error (func(error) %[3]s, or func(doc any, err error) %[3]s, as mongo's NewSingleResultFromDocument); else mark it skip, or guard it by hand: Circuit.Allow before the call, Ticket.Done with Scan's error",
			s.Name, m.Name, types.TypeString(t, b.qualifier))
		return false
	case Builds(t):
		b.errs.Add(where, "method %s.%s returns %s, which does not report an error: if it is a builder, guard %[3]s in this run too, and it comes back guarded; else mark it skip to pass it through", s.Name, m.Name, types.TypeString(t, b.qualifier))
		return false
	default:
		b.errs.Add(where, "method %s.%s does not return error last: a guarded method must, or return one result that reports its error (Err() error, a row's Scan, iter.Seq2[T, error]); mark it skip to pass it through", s.Name, m.Name)
		return false
	}
	if m.Shape == Row {
		if hasTypeParam(t) {
			b.errs.Add(where, "method %s.%s returns %s, which mentions a type parameter: a generic row is not supported; mark it skip", s.Name, m.Name, types.TypeString(t, b.qualifier))
			return false
		}
	}
	return true
}

// stream checks the method m, which returns (S, error) with S a stream,
// and sets its shape: a server stream (Recv, no Send) is guarded through
// the stream, whose end settles the call; a client or bidi stream, whose
// outcome spans the caller's sends, is refused, as are a stream of any
// direction and a stream the wrapper cannot stand in for.
func (b *builder) stream(s *spec.Interface, m *Method, where token.Position) bool {
	t := m.Results[0].Type
	name := types.TypeString(t, b.qualifier)
	const way = "mark it skip, or guard it by hand: Circuit.Allow before the call, Ticket.Done where its error surfaces"
	switch streamKind(t) {
	case ClientStream:
		b.errs.Add(where, "method %s.%s returns %s, a client stream (Send, CloseAndRecv): its error surfaces at CloseAndRecv, after sends the wrapper does not see, so settling it when it opens would count a failing stream a success; %s", s.Name, m.Name, name, way)
		return false
	case BidiStream:
		b.errs.Add(where, "method %s.%s returns %s, a bidi stream (Send, Recv): its sends and receives interleave, with no one end the wrapper can settle it at, and settling it when it opens would count a failing stream a success; %s", s.Name, m.Name, name, way)
		return false
	case UntypedStream:
		b.errs.Add(where, "method %s.%s returns %s, a stream of any direction (RecvMsg): its error surfaces at RecvMsg, after the call, and no one end of it is known to the wrapper, so settling it when it opens would count a failing stream a success; guard the generated service client's streaming methods instead, or %s", s.Name, m.Name, name, way)
		return false
	}
	methods, exported := interfaceMethods(t)
	switch {
	case !types.IsInterface(t):
		b.errs.Add(where, "method %s.%s returns %s, a stream (Recv() (T, error)) of a concrete type: its error surfaces at Recv, but the wrapper cannot return a stream of its own that is a %[3]s to settle it there, and settling it when it opens would count a failing stream a success; return an interface with Recv (grpc.ServerStreamingClient[T]), or %s", s.Name, m.Name, name, way)
		return false
	case !exported:
		b.errs.Add(where, "method %s.%s returns %s, a stream (Recv() (T, error)) with unexported methods: the wrapper cannot implement it to settle the call at Recv; %s", s.Name, m.Name, name, way)
		return false
	case hasTypeParam(t):
		b.errs.Add(where, "method %s.%s returns %s, which mentions a type parameter: a generic stream is not supported; mark it skip", s.Name, m.Name, name)
		return false
	}
	m.Shape, m.Row = Stream, &RowType{Iface: t, Methods: methods, Stream: true}
	return true
}

// resultTuple returns m's results as a tuple.
func resultTuple(m *Method) *types.Tuple {
	vars := make([]*types.Var, len(m.Results))
	for i, r := range m.Results {
		vars[i] = types.NewParam(token.NoPos, nil, "", r.Type)
	}
	return types.NewTuple(vars...)
}

// noRejecter says why a result of type t, which reports its error, cannot
// be made to carry a rejection: the constructor its package lacks, or
// the constructors tied, and what of SetErr(error) it has.
func (b *builder) noRejecter(t types.Type, tied []*types.Func) string {
	name := types.TypeString(t, b.qualifier)
	why := fmt.Sprintf("its package has no constructor from an error (an exported function returning %s whose parameters include exactly one error, as func(error) %[1]s or func(doc D, err error) %[1]s, the others given zero values, an any struct{}{})", name)
	if len(tied) > 0 {
		names := make([]string, len(tied))
		for i, fn := range tied {
			names[i] = fn.Name()
		}
		why = fmt.Sprintf("its package has %d constructors from an error with as few parameters, %s, and the generator takes one only when it has fewer than every other", len(tied), strings.Join(names, " and "))
	}
	setErr := types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType))
	switch {
	case types.IsInterface(t) && hasMethod(t, "SetErr", setErr, types.NewTuple()):
		return "it has SetErr(error), but the wrapper cannot make a value of an interface; " + why
	case !types.IsInterface(t) && hasMethod(types.NewPointer(t), "SetErr", setErr, types.NewTuple()):
		return fmt.Sprintf("SetErr(error) is a method of *%s, and a carrier is guarded as a pointer; %s", types.TypeString(t, b.qualifier), why)
	}
	return "it has no SetErr(error), and " + why
}

// noRejecterWay says what to do for a result of type t that cannot carry
// a rejection.
func (b *builder) noRejecterWay(t types.Type) string {
	name := types.TypeString(t, b.qualifier)
	setErr := types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType))
	switch {
	case types.IsInterface(t) && hasMethod(t, "SetErr", setErr, types.NewTuple()):
		return "return a pointer to a concrete type, or mark it skip"
	case !types.IsInterface(t) && hasMethod(types.NewPointer(t), "SetErr", setErr, types.NewTuple()):
		return fmt.Sprintf("return *%s, or mark it skip", name)
	}
	return "mark it skip, or guard it by hand: Circuit.Allow before the call, Ticket.Done with the error it reports"
}

// concreteError reports, when m's last result is an error type other than
// error, that a rejection cannot be returned as one.
func (b *builder) concreteError(s *spec.Interface, m *Method, where token.Position) bool {
	n := len(m.Results)
	if n == 0 || !types.Implements(m.Results[n-1].Type, errorIface) {
		return false
	}
	last := types.TypeString(m.Results[n-1].Type, b.qualifier)
	why := fmt.Sprintf("a rejected call returns a *circuit.OpenError, which is no %s", last)
	if isOpenError(m.Results[n-1].Type) {
		why = fmt.Sprintf("a *circuit.OpenError is a %s, but the wrapper settles and rejects calls through an error result only", last)
	}
	b.errs.Add(where, "method %s.%s returns %s last, not error: %s; return error (the caller's errors.As still finds %s), or mark it skip", s.Name, m.Name, last, why, last)
	return true
}

// isOpenError reports whether t is an interface that *circuit.OpenError
// implements (type E error): every method of t is one of its.
func isOpenError(t types.Type) bool {
	it, ok := t.Underlying().(*types.Interface)
	if !ok {
		return false
	}
	open := reflect.TypeFor[*circuit.OpenError]()
	for i := range it.NumMethods() {
		if _, ok := open.MethodByName(it.Method(i).Name()); !ok {
			return false
		}
	}
	return true
}

// fallbackMode sets when the wrapper's fallback answers m, from its
// fallback option (rejected when not given). A row's or an iterator's
// failure comes after the method returned, when the fallback can no longer
// answer: fallback=failed is an error there.
func (b *builder) fallbackMode(s *spec.Interface, m *Method, o *spec.Options, where token.Position) bool {
	m.Fallback = FallbackRejected
	switch o.Fallback.Val {
	case spec.FallbackFailed:
		m.Fallback = FallbackFailed
	case spec.FallbackNever:
		m.Fallback = FallbackNever
	}
	if o.Fallback.Bad {
		return false
	}
	if m.Fallback == FallbackFailed && (m.Shape == Row || m.Shape == Seq || m.Shape == Stream) {
		pos := where
		if o.Fallback.Set {
			pos = o.Fallback.Pos
		}
		what := "a row, whose failure comes at Scan"
		switch m.Shape {
		case Seq:
			what = "an iterator, whose failure comes while it is ranged over"
		case Stream:
			what = "a stream, whose failure comes at Recv"
		}
		b.errs.Add(pos, "method %s.%s returns %s, after the method returned: its fallback can answer only a rejection; give it fallback=rejected", s.Name, m.Name, what)
		return false
	}
	return true
}

// IsGuardable reports whether a method of signature sig can be guarded:
// it returns error last (but a stream the wrapper refuses), or one result
// that reports its error in a shape the wrapper guards.
func IsGuardable(sig *types.Signature) bool {
	res := sig.Results()
	switch streamResult(res) {
	case NoStream:
	case ServerStream:
		_, ok := interfaceMethods(res.At(0).Type())
		return ok && !hasTypeParam(res.At(0).Type())
	default:
		return false // a client, bidi or untyped stream: refused
	}
	if res.Len() > 0 && types.Identical(res.At(res.Len()-1).Type(), errorType) {
		return true
	}
	if res.Len() != 1 {
		return false
	}
	t := res.At(0).Type()
	_, rejects, _ := rejecter(t)
	return CarriesError(t) && Settable(t) || rowMethods(t) != nil || seqElem(t) != nil || errMethod(t) != "" && rejects
}

// RefusedStream reports whether a method of signature sig returns
// (S, error) with S a client, bidi or untyped stream, which the wrapper
// refuses.
func RefusedStream(sig *types.Signature) bool {
	k := streamResult(sig.Results())
	return k == ClientStream || k == BidiStream || k == UntypedStream
}

// PassesThrough reports whether a method of signature sig passes through
// unguarded unless it is named: it returns only an iter.Seq[T] or
// iter.Seq2[K, V] with no error in it, a stream that cannot fail.
func PassesThrough(sig *types.Signature) bool {
	res := sig.Results()
	if res.Len() != 1 || seqElem(res.At(0).Type()) != nil {
		return false
	}
	t := res.At(0).Type()
	return (isNamed(t, "iter", "Seq") || isNamed(t, "iter", "Seq2")) && failingSeq(t) == nil
}

// failingSeq returns the first type argument of the iter.Seq or iter.Seq2
// t that implements error (a stream that can fail, but not as
// iter.Seq2[T, error] does), or nil.
func failingSeq(t types.Type) types.Type {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || !isNamed(n, "iter", "Seq") && !isNamed(n, "iter", "Seq2") {
		return nil
	}
	for i := range n.TypeArgs().Len() {
		if a := n.TypeArgs().At(i); types.Implements(a, errorIface) {
			return a
		}
	}
	return nil
}

// checkType reports types a method's signature uses that the output
// package cannot name, and invalid types left by type errors.
func (b *builder) checkType(where token.Position, fn *types.Func, t types.Type) bool {
	ok := true
	walkType(t, func(t types.Type) {
		switch t := t.(type) {
		case *types.Basic:
			if t.Kind() == types.Invalid && ok {
				ok = false
				if c := b.cgoType(fn); c != "" {
					b.errs.Add(where, "method %s uses %s, a cgo type, which the generated file cannot name: declare a Go type for it (type CInt int32) and convert where the package calls C", fn.Name(), c)
					return
				}
				b.errs.Add(where, "method %s does not type-check", fn.Name())
				b.typeErrors()
			}
		case *types.Named, *types.Alias:
			obj := t.(interface{ Obj() *types.TypeName }).Obj()
			switch {
			case !ok || obj.Pkg() == nil || obj.Pkg() == b.home:
			case !obj.Exported():
				ok = false
				b.errs.Add(where, "method %s uses unexported type %s.%s, which package %s cannot name", fn.Name(), obj.Pkg().Path(), obj.Name(), b.home.Name())
			case !importable(obj.Pkg().Path(), b.home.Path()):
				ok = false
				b.errs.Add(where, "method %s uses type %s.%s, whose package is internal: package %s cannot import it", fn.Name(), obj.Pkg().Path(), obj.Name(), b.home.Path())
			}
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); ok && !f.Exported() && f.Pkg() != b.home {
					ok = false
					b.errs.Add(where, "method %s uses a struct type with unexported field %s of package %s, which package %s cannot write", fn.Name(), f.Name(), f.Pkg().Path(), b.home.Name())
				}
			}
		case *types.Interface:
			for i := range t.NumExplicitMethods() {
				if m := t.ExplicitMethod(i); ok && !m.Exported() && m.Pkg() != b.home {
					ok = false
					b.errs.Add(where, "method %s uses an interface type with unexported method %s of package %s, which package %s cannot write", fn.Name(), m.Name(), m.Pkg().Path(), b.home.Name())
				}
			}
		}
	})
	return ok
}

// typeErrors reports the target package's type errors once.
func (b *builder) typeErrors() {
	if b.typeErrsShown {
		return
	}
	b.typeErrsShown = true
	for _, e := range b.target.Errors {
		if e.Type && !b.target.Ours[e.Pos.Filename] {
			b.errs.Add(e.Pos, "%s", e.Msg)
		}
	}
}

// cgoType returns the first cgo type (C.name) the declaration of the
// interface method fn mentions, or "".
func (b *builder) cgoType(fn *types.Func) string {
	f := b.prog.FileOf(fn)
	if f == nil || !slices.ContainsFunc(f.Imports, func(is *ast.ImportSpec) bool { return is.Path.Value == `"C"` }) {
		return ""
	}
	found := ""
	ast.Inspect(f, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		field, ok := n.(*ast.Field)
		if !ok || len(field.Names) != 1 || field.Names[0].Pos() != fn.Pos() {
			return true
		}
		ast.Inspect(field.Type, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && found == "" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "C" {
					found = "C." + sel.Sel.Name
				}
			}
			return found == ""
		})
		return false
	})
	return found
}

// warnSlowReader warns when slow= times a call that ends after the method
// returned, with its caller's reading: an iterator, a stream or a cursor,
// settled at its end. A slow reader would count as a failure.
func (b *builder) warnSlowReader(s *spec.Interface, m *Method, p circuit.Policy, o *spec.Options, where token.Position) {
	what := ""
	switch {
	case p.SlowCall == 0:
		return
	case m.Shape == Seq:
		what = "an iterator"
	case m.Shape == Stream:
		what = "a stream"
	case m.Shape == Row && m.Row.Cursor():
		what = "a cursor"
	default:
		return
	}
	if o.Policy.Slow.Set {
		where = o.Policy.Slow.Pos
	}
	b.errs.Warn(where, "slow=%v times method %s.%s, which returns %s, until its end: the caller's own reading counts, and a slow reader is a failure; give %[3]s a circuit without slow=",
		p.SlowCall, s.Name, m.Name, what)
}
