package generator

import (
	"go/token"
	"go/types"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Model is everything one output file holds: the guarded interfaces of one
// package. It is pure data: build makes it, and nothing changes it after;
// name chooses the file's identifiers and render writes it.
type Model struct {
	// Path is the output file.
	Path string
	// PkgPath and PkgName are the package the file belongs to.
	PkgPath, PkgName string
	// Interfaces are the guarded interfaces, in a stable order.
	Interfaces []*Interface
	// Circuits are the distinct circuits of the file, one policy each, in
	// the order of first use.
	Circuits []*Circuit
	// Classifiers are the distinct generated classifiers, in the order of
	// first use.
	Classifiers []*Classifier
	// Decls are the package-level names the package declares (a previous
	// output of ours left out), which the file's names must not take.
	Decls map[string]bool
}

// Interface is one guarded interface and its wrapper.
type Interface struct {
	// Name is the interface's name; PkgPath its package's import path.
	Name, PkgPath string
	// Wrapper, Constructor and With name the generated type and its two
	// constructors: from a Breaker, and from prepared circuits.
	Wrapper, Constructor, With string
	// TypeParams are the interface's type parameters, in order.
	TypeParams []*types.TypeParam
	// Methods are the interface's methods, embedded ones included.
	Methods []*Method
	// Circuits are the circuits its guarded methods use, in method order.
	Circuits []*Circuit
}

// Circuit is one circuit name with its policy.
type Circuit struct {
	// Name is the circuit's name.
	Name string
	// Policy is its policy, defaults applied and checked.
	Policy circuit.Policy
	// Pos is where the policy was first given.
	Pos token.Position
}

// Method is one method of a guarded interface.
type Method struct {
	// Name is the method's name.
	Name string
	// Params are the parameters as declared (names may be empty);
	// Variadic marks the last as ...T.
	Params   []Var
	Variadic bool
	// Results are the results; their names are not used.
	Results []Var
	// Skip marks a method that calls next directly.
	Skip bool
	// Circuit is the method's circuit.
	Circuit *Circuit
	// Classify is the method's classifier.
	Classify *Classifier
	// Ctx is the index of the context.Context parameter passed to the
	// breaker, or -1.
	Ctx int
	// Request is, when there is no Ctx, the index of a *net/http.Request
	// parameter whose Context is passed to the breaker, or -1.
	Request int
	// Carrier marks a method whose only result carries its error: its
	// Err() method reports it, and SetErr(error) sets it on rejection.
	Carrier bool
}

// Var is a parameter or result.
type Var struct {
	Name string
	Type types.Type
}

// Classifier maps a call's result to a circuit.Outcome: a generated
// function, or one the user names with classifier=.
type Classifier struct {
	// Func is the user's function, for classifier=; the rest is unset
	// but Result.
	Func *types.Func
	// Errors are the selected errors, in the order given.
	Errors []ErrorMatch
	// Statuses are the selected HTTP statuses.
	Statuses []StatusRange
	// Codes are the selected gRPC code names.
	Codes []string
	// Result is the index of the result passed to the classifier with the
	// error, or -1.
	Result int
	// ResultType is that result's type; ResultKind how its status is read.
	ResultType types.Type
	ResultKind StatusKind
}

// ErrorMatch is one selected error: a variable matched with errors.Is, or
// a type with errors.As.
type ErrorMatch struct {
	// Var is the variable, or nil.
	Var *types.Var
	// Type is the type, when Var is nil.
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
