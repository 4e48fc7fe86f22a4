package generator

import (
	"go/types"
	"time"
)

// Model is everything one output file holds: the guarded interfaces of one
// package. It is pure data, built by build and read by render.
type Model struct {
	// Path is the output file.
	Path string
	// PkgPath and PkgName are the package the file belongs to.
	PkgPath, PkgName string
	// Interfaces are the guarded interfaces, in a stable order.
	Interfaces []*Interface
	// Policies are the distinct policies, one package-level value each.
	Policies []*PolicyVar
	// Imports maps every import path the file may use to its name in the
	// file; Aliased marks the paths imported under an alias.
	Imports map[string]string
	Aliased map[string]bool
	// Decls are the package-level names of the package and of the file,
	// which no import name or local may hide.
	Decls map[string]bool
}

// Interface is one guarded interface and its wrapper.
type Interface struct {
	// Name is the interface's name; PkgPath its package's import path.
	Name, PkgPath string
	// Wrapper and Constructor name the generated type and its constructor.
	Wrapper, Constructor string
	// TypeParams are the interface's type parameters, in order.
	TypeParams []*types.TypeParam
	// Next and Circuits name the wrapper's fields: the wrapped value and
	// its bound circuits, one per distinct circuit and policy.
	Next, Circuits string
	// Methods are the interface's methods, embedded ones included.
	Methods []*Method
}

// Method is one method of a guarded interface.
type Method struct {
	// Name is the method's name.
	Name string
	// Params are the parameters, every one named; Variadic marks the last
	// as ...T.
	Params   []Var
	Variadic bool
	// Results are the results; their names are not used.
	Results []Var
	// Skip marks a method that calls next directly.
	Skip bool
	// Circuit is the circuit's name; Policy its policy value.
	Circuit string
	Policy  *PolicyVar
	// Classify is the method's classifier.
	Classify *Classifier
	// Ctx is the index of the context.Context parameter passed to the
	// breaker, or -1.
	Ctx int
	// Request is, when there is no Ctx, the index of a *net/http.Request
	// parameter whose Context is passed to the breaker, or -1.
	Request int
	// Recv, Err and Ran name the receiver and the locals of the body; Ran,
	// set only for methods with a Request, records that next was called.
	Recv, Err, Ran string
	// ResultNames name the locals that hold the results but the error.
	ResultNames []string
}

// Var is a parameter or result.
type Var struct {
	Name string
	Type types.Type
}

// PolicyVar is a package-level circuit.Policy value.
type PolicyVar struct {
	// Name is the variable's name.
	Name string
	// Circuit is the circuit it was first made for.
	Circuit string
	// Threshold, Cooldown and Lease are the policy's fields.
	Threshold       int
	Cooldown, Lease time.Duration
}

// Classifier maps a call's result to a circuit.Outcome.
type Classifier struct {
	// Name is the classifier function's name; Circuit the circuit of the
	// first method that uses it.
	Name, Circuit string
	// Errors are the selected errors, in the order given.
	Errors []ErrorMatch
	// Statuses are the selected HTTP statuses.
	Statuses []StatusRange
	// Result is the index of the result that carries a status, or -1.
	Result int
	// ResultType is that result's type; ResultKind how its status is read.
	ResultType types.Type
	ResultKind StatusKind
}

// ErrorMatch is one selected error.
type ErrorMatch struct {
	// Is is true for a sentinel value (errors.Is), false for a type
	// (errors.As).
	Is bool
	// PkgPath, PkgName and Name name the variable for Is.
	PkgPath, PkgName, Name string
	// Type is the target type for As.
	Type types.Type
}

// StatusRange is an inclusive range of HTTP status codes.
type StatusRange struct {
	Lo, Hi int
}

// StatusKind is how a result carries an HTTP status.
type StatusKind int

const (
	// NoStatus means no result carries a status.
	NoStatus StatusKind = iota
	// StatusField is a *net/http.Response: resp.StatusCode.
	StatusField
	// StatusMethod is a type with a StatusCode() int method.
	StatusMethod
)
