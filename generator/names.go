package generator

import (
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
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

// Names are the identifiers of one output file.
type Names struct {
	// Imports maps every import path the file may use to its name in the
	// file; Aliased marks the paths imported under an alias.
	Imports map[string]string
	Aliased map[string]bool
	// Policies name the package-level policy of each circuit.
	Policies map[*Circuit]string
	// Classifiers name the generated classifier functions.
	Classifiers map[*Classifier]string
	// Wrappers are the names inside each wrapper and its constructors.
	Wrappers map[*Interface]*WrapperNames
	// Methods are the names inside each method.
	Methods map[*Method]*MethodNames
	// Locals are the names inside each classifier.
	Locals map[*Classifier]*ClassifierNames
}

// WrapperNames are the fields of a wrapper and its constructors' parameters.
type WrapperNames struct {
	// Next is the field holding the wrapped value; Fields hold the circuits.
	Next   string
	Fields map[*Circuit]string
	// NewNext and NewBreaker are the parameters of the constructor from a
	// Breaker; WithNext and WithCircuits those of the one from circuits.
	NewNext, NewBreaker string
	WithNext            string
	WithCircuits        map[*Circuit]string
}

// MethodNames are the receiver, parameters and locals of a method.
type MethodNames struct {
	Recv    string
	Params  []string
	Err     string
	Ran     string // set only when the method's request body needs closing
	Results []string
}

// ClassifierNames are the parameters and locals of a classifier.
type ClassifierNames struct {
	Err, Result string
	Targets     []string // one per errors.As target
	Code, OK    string
	// Status is the gRPC status read from the error, for codes=.
	Status string
}

// name chooses every identifier of m's file: imports first, then the
// package-level names, then the names inside each declaration.
func name(m *Model) *Names {
	n := &Names{
		Policies: map[*Circuit]string{}, Classifiers: map[*Classifier]string{},
		Wrappers: map[*Interface]*WrapperNames{}, Methods: map[*Method]*MethodNames{},
		Locals: map[*Classifier]*ClassifierNames{},
	}
	pkg := newScope(nil)
	for d := range m.Decls {
		pkg.taken[d] = true
	}
	for _, it := range m.Interfaces {
		pkg.taken[it.Wrapper], pkg.taken[it.Constructor], pkg.taken[it.With] = true, true, true
		// A type parameter hides a package-level name (an import, a
		// policy) in the wrapper's declarations.
		for _, tp := range it.TypeParams {
			pkg.taken[tp.Obj().Name()] = true
		}
	}
	n.Imports, n.Aliased = nameImports(m, pkg)
	for _, c := range m.Circuits {
		n.Policies[c] = pkg.add("policy" + camel(c.Name))
	}
	for _, c := range m.Classifiers {
		n.Classifiers[c] = pkg.add(classifierName(c))
		n.Locals[c] = nameClassifier(c, pkg)
	}
	for _, it := range m.Interfaces {
		n.Wrappers[it] = nameWrapper(it, pkg)
		for _, mt := range it.Methods {
			n.Methods[mt] = nameMethod(it, mt, pkg)
		}
	}
	return n
}

// nameImports gives every package the file may use a name: its own, or
// an alias numbered in import path order where names clash with each other
// or with the package's declarations. The names are declared in pkg.
func nameImports(m *Model, pkg *scope) (map[string]string, map[string]bool) {
	imports := map[string]string{circuitPath: "circuit", "context": "context", "errors": "errors", "time": "time"}
	for _, it := range m.Interfaces {
		for _, tp := range it.TypeParams {
			packagesOf(tp.Constraint(), imports)
		}
		for _, mt := range it.Methods {
			for _, v := range slices.Concat(mt.Params, mt.Results) {
				packagesOf(v.Type, imports)
			}
			if c := mt.Classify; c != nil && c.Func != nil {
				imports[c.Func.Pkg().Path()] = c.Func.Pkg().Name()
			}
		}
	}
	for _, c := range m.Classifiers {
		for _, e := range c.Errors {
			if e.Var != nil {
				imports[e.Var.Pkg().Path()] = e.Var.Pkg().Name()
			} else {
				packagesOf(e.Type, imports)
			}
		}
		if len(c.Codes) > 0 {
			imports[grpcStatusPath], imports[grpcCodesPath] = "status", "codes"
		}
	}
	delete(imports, m.PkgPath)
	aliased := map[string]bool{}
	for _, path := range slices.Sorted(maps.Keys(imports)) {
		base := imports[path]
		alias := base
		for i := 2; pkg.taken[alias]; i++ {
			alias = base + strconv.Itoa(i)
		}
		if alias != base {
			imports[path], aliased[path] = alias, true
		}
		pkg.taken[alias] = true
	}
	return imports, aliased
}

// nameWrapper names the fields of it's wrapper and the parameters of its
// constructors.
func nameWrapper(it *Interface, pkg *scope) *WrapperNames {
	w := &WrapperNames{Fields: map[*Circuit]string{}, WithCircuits: map[*Circuit]string{}}
	// Fields share the wrapper's method names' space.
	fields := newScope(nil)
	for _, mt := range it.Methods {
		fields.taken[mt.Name] = true
	}
	w.Next = fields.add("next")
	bases := fieldBases(it.Circuits)
	for i, c := range it.Circuits {
		w.Fields[c] = fields.add(bases[i])
	}
	params := func() *scope {
		s := newScope(pkg)
		for _, tp := range it.TypeParams {
			s.taken[tp.Obj().Name()] = true
		}
		return s
	}
	s := params()
	w.NewNext, w.NewBreaker = s.add("next"), s.add("b")
	s = params()
	w.WithNext = s.add("next")
	for i, c := range it.Circuits {
		w.WithCircuits[c] = s.add(bases[i])
	}
	return w
}

// nameMethod names the receiver, parameters and locals of mt.
func nameMethod(it *Interface, mt *Method, pkg *scope) *MethodNames {
	s := newScope(pkg)
	for _, tp := range it.TypeParams {
		s.taken[tp.Obj().Name()] = true
	}
	n := &MethodNames{}
	for i, p := range mt.Params {
		base := p.Name
		if base == "" || base == "_" {
			base = "p" + strconv.Itoa(i)
		}
		n.Params = append(n.Params, s.add(base))
	}
	n.Recv = s.add("g")
	if mt.Skip {
		return n
	}
	n.Err = s.add("err")
	if mt.Ctx < 0 && mt.Request >= 0 {
		n.Ran = s.add("ran")
	}
	results := len(mt.Results) - 1
	if mt.Carrier {
		results = 1
	}
	for i := range results {
		n.Results = append(n.Results, s.add("r"+strconv.Itoa(i)))
	}
	return n
}

// nameClassifier names the parameters and locals of c.
func nameClassifier(c *Classifier, pkg *scope) *ClassifierNames {
	s := newScope(pkg)
	n := &ClassifierNames{Err: s.add("err")}
	if c.Result >= 0 {
		n.Result = s.add("result")
	}
	for _, e := range c.Errors {
		if e.Var == nil {
			n.Targets = append(n.Targets, s.add("target"))
		}
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

// classifierName says what a classifier selects: classifyOpErrorOrStatus5xx.
func classifierName(c *Classifier) string {
	var parts []string
	for _, e := range c.Errors {
		if e.Var != nil {
			name := strings.TrimPrefix(e.Var.Name(), "Err")
			if name == "" {
				name = e.Var.Name() // Err itself
			}
			parts = append(parts, upperFirst(name))
			continue
		}
		t := e.Type
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		name := types.TypeString(t, func(*types.Package) string { return "" })
		if n, ok := types.Unalias(t).(*types.Named); ok {
			name = n.Obj().Name()
			if name == "Error" && n.Obj().Pkg() != nil {
				name = camel(n.Obj().Pkg().Name()) + name
			}
		}
		parts = append(parts, upperFirst(name))
	}
	if len(c.Statuses) > 0 {
		var ss []string
		for _, r := range c.Statuses {
			switch {
			case r.Lo == r.Hi:
				ss = append(ss, strconv.Itoa(r.Lo))
			case r.Lo%100 == 0 && r.Hi == r.Lo+99:
				ss = append(ss, strconv.Itoa(r.Lo/100)+"xx")
			default:
				ss = append(ss, strconv.Itoa(r.Lo)+"to"+strconv.Itoa(r.Hi))
			}
		}
		parts = append(parts, "Status"+strings.Join(ss, "Or"))
	}
	parts = append(parts, c.Codes...)
	if len(parts) > 3 {
		parts = append(parts[:2], "More")
	}
	name := "classify" + strings.Join(parts, "Or")
	// A classifier that also reads a result says which.
	if c.Result >= 0 {
		if n, ok := types.Unalias(derefType(c.ResultType)).(*types.Named); ok {
			name += n.Obj().Name()
		} else {
			name += "Result"
		}
	}
	return name
}

// derefType returns what t points to, or t.
func derefType(t types.Type) types.Type {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		return p.Elem()
	}
	return t
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
