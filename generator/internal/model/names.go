package model

import (
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// scope is the identifiers declared in one Go scope, within its enclosing
// scope. Every identifier circuitgen generates comes from one, so that no
// name hides another the code uses.
type scope struct {
	parent *scope
	taken  map[string]bool
}

// newScope returns an empty scope within parent (nil: the file's package).
func newScope(parent *scope) *scope {
	return &scope{parent: parent, taken: map[string]bool{}}
}

// has reports whether name is declared in s or an enclosing scope, or is
// predeclared, a keyword or blank.
func (s *scope) has(name string) bool {
	for ; s != nil; s = s.parent {
		if s.taken[name] {
			return true
		}
	}
	return types.Universe.Lookup(name) != nil || token.Lookup(name).IsKeyword() || name == "_"
}

// add declares base, or base with a number appended when base is taken,
// and returns the name declared.
func (s *scope) add(base string) string {
	name := base
	for i := 1; s.has(name); i++ {
		name = base + strconv.Itoa(i)
	}
	s.taken[name] = true
	return name
}

// nameWrapper sets the names of w's type and constructors, and reports
// whether they are free.
func (b *builder) nameWrapper(s *spec.Interface, w *Wrapper) bool {
	w.Type = "Guarded" + s.Name
	if !token.IsExported(s.Name) {
		w.Type = "guarded" + upperFirst(s.Name)
	}
	wpos := s.Pos
	if s.Opts.Wrapper.Set {
		name := s.Opts.Wrapper.Val
		w.Type, wpos = name, s.Opts.Wrapper.Pos
		if !token.IsIdentifier(name) || name == "_" {
			b.errs.Add(wpos, "wrapper %q is not a Go identifier", name)
			return false
		}
		// A type named like a predeclared identifier would hide it
		// from the whole package (the generated code uses error, nil,
		// int, ...); init and main cannot name a type.
		if types.Universe.Lookup(name) != nil || name == "init" || name == "main" && b.home.Name() == "main" {
			b.errs.Add(wpos, "wrapper %q is a predeclared or reserved name: choose another wrapper= name", name)
			return false
		}
	}
	w.Constructor = "new" + upperFirst(w.Type)
	if token.IsExported(w.Type) {
		w.Constructor = "New" + w.Type
	}
	w.With = w.Constructor + "WithCircuits"
	w.Option = w.Type + "Option"
	base := w.Type
	for _, prefix := range []string{"Guarded", "guarded"} {
		if rest, ok := strings.CutPrefix(base, prefix); ok && rest != "" {
			base = rest
		}
	}
	w.WithFallback = "with" + upperFirst(base) + "Fallback"
	if token.IsExported(w.Type) {
		w.WithFallback = "With" + upperFirst(base) + "Fallback"
	}
	ok := true
	for _, n := range []string{w.Type, w.Constructor, w.With, w.Option, w.WithFallback} {
		if o := b.lookup(n); o != nil {
			b.errs.Add(wpos, "%s is already declared at %s: choose another wrapper= name", n, diag.RelPath(s.Target, b.position(o.Pos()).String()))
			ok = false
		} else if b.generated[n] {
			b.errs.Add(wpos, "%s is generated twice: choose another wrapper= name", n)
			ok = false
		}
		b.generated[n] = true
	}
	return ok
}

// name chooses every identifier of f inside its declarations: imports
// first, then the package-level names, then the names inside each
// declaration. home is the package f belongs to, whose declarations (a
// previous output of ours left out) the names must not hide.
func name(f *File, home *types.Package) {
	pkg := newScope(nil)
	for _, d := range home.Scope().Names() {
		pkg.taken[d] = true
	}
	for _, w := range f.Wrappers {
		pkg.taken[w.Type], pkg.taken[w.Constructor], pkg.taken[w.With] = true, true, true
		pkg.taken[w.Option], pkg.taken[w.WithFallback] = true, true
		// A type parameter hides a package-level name (an import, a
		// policy) in the wrapper's declarations.
		for _, tp := range w.TypeParams {
			pkg.taken[tp.Obj().Name()] = true
		}
	}
	f.Imports = nameImports(f, pkg)
	policies := namePolicies(f, pkg)
	// Every classifier's name first, so that no ErrName takes another's.
	for _, c := range f.Classifiers {
		c.Name = pkg.add(classifierName(c, f))
	}
	for _, c := range f.Classifiers {
		if c.Result < 0 {
			c.ErrName = pkg.add(c.Name + "Err")
		}
	}
	for _, c := range f.Classifiers {
		c.Locals = nameClassifier(c, pkg)
	}
	for _, w := range f.Wrappers {
		nameFields(w, policies, pkg)
		for _, m := range w.Methods {
			nameMethod(w, m, pkg)
			if m.Row != nil {
				nameRow(w, m, pkg)
			}
			if m.Reject.SQLRow && f.SQLRow == nil {
				f.SQLRow = &SQLRowHelper{Func: pkg.add("rejectedSQLRow"), Connector: pkg.add("rejectedSQLConnector")}
			}
		}
	}
}

// nameRow names the row type of the Row method m of w, its fields and
// its methods' receiver and parameters.
func nameRow(w *Wrapper, m *Method, pkg *scope) {
	r := m.Row
	suffix := "Row"
	if r.Stream {
		suffix = "Stream"
	}
	r.Name = pkg.add(lowerFirst(w.Type) + m.Name + suffix)
	fields := newScope(nil)
	for _, fn := range r.Methods {
		fields.taken[fn.Name()] = true
	}
	r.Next, r.Ctx, r.Ticket = fields.add("next"), fields.add("ctx"), fields.add("ticket")
	if r.Stream {
		r.Stop = fields.add("stop")
	} else {
		r.Err = fields.add("err")
	}
	s := newScope(pkg)
	r.Recv = s.add("r")
	r.ScanErr, r.DoneErr = s.add("err"), s.add("doneErr")
	if r.Stream {
		r.Value = s.add("v")
	}
	n := 0
	for _, fn := range r.Methods {
		n = max(n, fn.Type().(*types.Signature).Params().Len())
	}
	for i := range n {
		r.Params = append(r.Params, s.add("p"+strconv.Itoa(i)))
	}
}

// nameImports gives every package the file may use a name: its own, or
// an alias numbered in import path order where names clash with each other
// or with the package's declarations. The names are declared in pkg.
func nameImports(f *File, pkg *scope) []Import {
	imports := map[string]string{CircuitPath: "circuit", "context": "context", "errors": "errors", "time": "time"}
	for _, w := range f.Wrappers {
		for _, tp := range w.TypeParams {
			packagesOf(tp.Constraint(), imports)
		}
		for _, m := range w.Methods {
			for _, v := range slices.Concat(m.Params, m.Results) {
				packagesOf(v.Type, imports)
			}
			if c := m.Classify; c != nil && c.Func != nil {
				imports[c.Func.Pkg().Path()] = c.Func.Pkg().Name()
			}
			if m.Row != nil {
				for _, fn := range m.Row.Methods {
					packagesOf(fn.Type(), imports)
				}
			}
			if m.Shape == Stream {
				imports["io"] = "io" // io.EOF, a stream's end
			}
			if fn := m.Reject.Func; fn != nil {
				imports[fn.Pkg().Path()] = fn.Pkg().Name()
				// The zero values of its other parameters: T{} names T.
				packagesOf(fn.Type().(*types.Signature).Params(), imports)
			}
		}
	}
	if slices.ContainsFunc(f.Wrappers, func(w *Wrapper) bool {
		return slices.ContainsFunc(w.Methods, func(m *Method) bool { return m.Reject.SQLRow })
	}) {
		imports["database/sql"], imports["database/sql/driver"] = "sql", "driver"
	}
	for _, c := range f.Classifiers {
		for _, e := range c.Errors {
			if e.Value != nil {
				imports[e.Value.Pkg().Path()] = e.Value.Pkg().Name()
			} else {
				packagesOf(e.Type, imports)
			}
		}
		for _, e := range c.StatusErrors {
			packagesOf(e.Type, imports)
		}
		if len(c.Codes) > 0 {
			imports[GRPCStatusPath], imports[GRPCCodesPath] = "status", "codes"
		}
	}
	delete(imports, f.PkgPath)
	var list []Import
	for _, path := range slices.Sorted(maps.Keys(imports)) {
		base := imports[path]
		alias := base
		for i := 2; pkg.taken[alias]; i++ {
			alias = base + strconv.Itoa(i)
		}
		pkg.taken[alias] = true
		list = append(list, Import{Path: path, Name: alias, Alias: alias != base})
	}
	return list
}

// packagesOf adds the import path and name of every package t mentions.
func packagesOf(t types.Type, into map[string]string) {
	walkType(t, func(t types.Type) {
		var obj *types.TypeName
		switch t := t.(type) {
		case *types.Named:
			obj = t.Obj()
		case *types.Alias:
			obj = t.Obj()
		}
		if obj != nil && obj.Pkg() != nil {
			into[obj.Pkg().Path()] = obj.Pkg().Name()
		}
	})
}

// nameFields names the fields of w and the parameters of its
// constructors, one field a circuit, in method order.
func nameFields(w *Wrapper, policies map[*Circuit]*Policy, pkg *scope) {
	byCircuit := map[*Circuit]*Field{}
	var circuits []*Circuit
	for _, m := range w.Methods {
		if m.Skip {
			continue
		}
		c := m.Field.Circuit
		if byCircuit[c] == nil {
			byCircuit[c] = &Field{Circuit: c, Policy: policies[c]}
			w.Fields = append(w.Fields, byCircuit[c])
			circuits = append(circuits, c)
		}
		m.Field = byCircuit[c]
	}
	// Fields share the wrapper's method names' space.
	fields := newScope(nil)
	for _, m := range w.Methods {
		fields.taken[m.Name] = true
	}
	w.Next = fields.add("next")
	bases := fieldBases(circuits)
	for i, fd := range w.Fields {
		fd.Name = fields.add(bases[i])
	}
	w.Fallback = fields.add("fallback")
	params := func() *scope {
		s := newScope(pkg)
		for _, tp := range w.TypeParams {
			s.taken[tp.Obj().Name()] = true
		}
		return s
	}
	s := params()
	w.NewNext, w.NewBreaker = s.add("next"), s.add("b")
	w.NewOpts = s.add("opts")
	s = params()
	w.WithNext = s.add("next")
	for i, fd := range w.Fields {
		fd.Param = s.add(bases[i])
	}
	w.WithOpts = s.add("opts")
	w.WithRecv, w.WithOpt = s.add("g"), s.add("opt")
	s = params()
	w.FallbackParam, w.OptionRecv = s.add("f"), s.add("g")
}

// nameMethod names the receiver, parameters and locals of m.
func nameMethod(w *Wrapper, m *Method, pkg *scope) {
	s := newScope(pkg)
	for _, tp := range w.TypeParams {
		s.taken[tp.Obj().Name()] = true
	}
	for i := range m.Params {
		base := m.Params[i].Declared
		if base == "" || base == "_" {
			base = "p" + strconv.Itoa(i)
		}
		m.Params[i].Name = s.add(base)
	}
	m.Recv = s.add("g")
	if m.Skip {
		return
	}
	if m.Shape == Builder {
		m.Results[0].Name = s.add("r0")
		return
	}
	m.Err = s.add("err")
	m.CallErr = s.add("callErr")
	if m.Ctx < 0 && m.Request >= 0 || m.Shape == Reported {
		m.Ran = s.add("ran")
	}
	if m.Shape == Row || m.Shape == Seq || m.Shape == Stream {
		m.Ticket = s.add("ticket")
		if m.Shape != Seq || len(m.Results) == 2 {
			m.Opened = s.add("opened")
		}
	}
	if m.Shape == Stream {
		m.Stop = s.add("stop")
	}
	if m.Shape == Seq {
		m.Settled, m.Yield, m.Value = s.add("settled"), s.add("yield"), s.add("v")
		if len(m.Results) == 2 {
			m.OpenErr, m.Ranged = s.add("openErr"), s.add("ranged")
			m.RangeTicket, m.RangeErr = s.add("rangeTicket"), s.add("rangeErr")
		}
	}
	if m.Fallback == FallbackFailed {
		m.Failed, m.Outcome = s.add("failed"), s.add("outcome")
		if m.Request >= 0 {
			m.Replay, m.ReplayErr = s.add("body"), s.add("bodyErr")
		}
	}
	if m.Fallback != FallbackNever {
		m.Open = s.add("open")
	}
	if m.Shape == ErrorLast {
		m.Op, m.Quiet, m.O = s.add("op"), s.add("q"), s.add("o")
	}
	results := len(m.Results) - 1
	if m.Shape != ErrorLast {
		results = 1
	}
	for i := range results {
		m.Results[i].Name = s.add("r" + strconv.Itoa(i))
	}
}

// nameClassifier names the parameters and locals of c.
func nameClassifier(c *Classifier, pkg *scope) ClassifierLocals {
	s := newScope(pkg)
	var n ClassifierLocals
	if c.Ctx {
		n.Ctx = s.add("ctx")
	}
	n.Err = s.add("err")
	if c.Result >= 0 {
		n.Result = s.add("result")
	}
	for _, e := range c.Errors {
		if e.Value == nil {
			n.Targets = append(n.Targets, s.add("target"))
		}
	}
	for range c.StatusErrors {
		n.Targets = append(n.Targets, s.add("target"))
	}
	if len(c.Statuses) > 0 {
		n.Code = s.add("code")
	}
	if len(c.Statuses) > 0 || len(c.Codes) > 0 {
		n.OK = s.add("ok")
	}
	if len(c.Codes) > 0 {
		n.Status = s.add("s")
	}
	return n
}

// fieldBases returns a field name for each circuit: its name in lower camel
// case, less the prefix all of them share (billing-api:charge and
// billing-api:refund give charge and refund).
func fieldBases(cs []*Circuit) []string {
	prefix := ""
	if len(cs) > 1 {
		prefix = cs[0].Name
		for _, c := range cs[1:] {
			for !strings.HasPrefix(c.Name, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
		// Cut only after a separator of the name's parts (billing-api:
		// or billing.api.), so that a part stays whole.
		prefix = prefix[:strings.LastIndexAny(prefix, ".:")+1]
	}
	bases := make([]string, len(cs))
	for i, c := range cs {
		b := lowerFirst(camel(strings.TrimPrefix(c.Name, prefix)))
		if b == "" || !unicode.IsLetter(rune(b[0])) {
			b = "circuit" + b
		}
		bases[i] = b
	}
	return bases
}

// classifierName names a classifier after what it serves, not what it
// selects, so that the name stays when the selection changes: the circuit
// it serves (classifyBillingAPICharge), with the method first using it when
// the circuit has other classifiers too, or the interface whose rule set
// several circuits share (classifyBillingAPI).
func classifierName(c *Classifier, f *File) string {
	switch len(c.Circuits) {
	case 0: // its method is in error: nothing is rendered
		return "classify"
	case 1:
	default:
		return "classify" + upperFirst(c.iface)
	}
	name := "classify" + camel(c.Circuits[0])
	for _, o := range f.Classifiers {
		if o != c && slices.Contains(o.Circuits, c.Circuits[0]) {
			return name + c.method
		}
	}
	return name
}

// initialisms are written in upper case in generated names.
var initialisms = map[string]bool{
	"api": true, "db": true, "grpc": true, "http": true, "https": true, "id": true,
	"io": true, "ip": true, "json": true, "rpc": true, "sql": true, "tcp": true,
	"tls": true, "udp": true, "uri": true, "url": true, "xml": true,
}

// camel turns a circuit name such as billing-api:charge into BillingAPICharge.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool {
		return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if initialisms[strings.ToLower(part)] {
			b.WriteString(strings.ToUpper(part))
		} else {
			b.WriteString(upperFirst(part))
		}
	}
	return b.String()
}

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// lowerFirst turns an upper camel name into lower camel case, an initial
// initialism included: APICharge becomes apiCharge, HTTP http.
func lowerFirst(s string) string {
	r := []rune(s)
	i := 0
	for i < len(r) && unicode.IsUpper(r[i]) {
		i++
	}
	switch {
	case i == 0:
		return s
	case i == 1 || i == len(r):
		return strings.ToLower(string(r[:i])) + string(r[i:])
	}
	// APICharge: the last capital starts the next word.
	return strings.ToLower(string(r[:i-1])) + string(r[i-1:])
}

// Camel turns a circuit name such as billing-api:charge into
// BillingAPICharge, as the names of the file's declarations use it.
func Camel(s string) string { return camel(s) }
