// Package model builds, from the specs of one target package and the
// loaded types, the model of its output file: checked, with every
// identifier of the file chosen, and not changed after Build returns. The
// renderer writes it as it is.
package model

import (
	"go/token"
	"go/types"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// File is everything one output file holds: the guarded interfaces of one
// package.
type File struct {
	// Path is the output file; TestPath the test file beside it that
	// asserts each wrapper implements its interface.
	Path, TestPath string
	// PkgPath and PkgName are the package the file belongs to.
	PkgPath, PkgName string
	// Constraint is the expression of the files' //go:build line, or ""
	// for none: they are built only where the package's files declaring
	// what they wrap are.
	Constraint string
	// Imports are the packages the file may use, by import path.
	Imports []Import
	// Policies are the file's package-level policies, one for each
	// distinct policy, in the order of first use.
	Policies []*Policy
	// Wrappers are the guarded interfaces, in a stable order.
	Wrappers []*Wrapper
	// Classifiers are the generated classifiers, in the order of first
	// use.
	Classifiers []*Classifier
	// SQLRow, when a Reported method returns *database/sql.Row, names the
	// file's helper that makes one carrying a rejection.
	SQLRow *SQLRowHelper
}

// SQLRowHelper names the declarations that make a *database/sql.Row
// carrying an error: a function, and a connector whose Connect fails with
// it.
type SQLRowHelper struct {
	Func, Connector string
}

// Import is one package the file may use and its name in the file.
type Import struct {
	Path, Name string
	// Alias marks a name that is not the package's own.
	Alias bool
}

// Circuit is one circuit name with its policy. One name has one policy in
// every package of a run.
type Circuit struct {
	// Name is the circuit's name.
	Name string
	// Policy is its policy, defaults applied and checked.
	Policy circuit.Policy
	// Pos is where the policy was first given.
	Pos token.Position
}

// Policy is a package-level policy variable of the file.
type Policy struct {
	// Var is the variable's name.
	Var string
	// Value is the policy.
	Value circuit.Policy
	// Fields are the fields its literal sets, in the schema's order: every
	// field that is not zero, but MinCalls and Window without FailureRate,
	// which do nothing then.
	Fields []PolicyField
}

// PolicyField is one field of a policy literal: its name and its value, an
// int, a float64 or a time.Duration.
type PolicyField struct {
	Name  string
	Value any
}

// Wrapper is one guarded interface and its wrapper.
type Wrapper struct {
	// Interface is the interface's name; PkgPath its package's import
	// path; TypeParams its type parameters, in order.
	Interface, PkgPath string
	TypeParams         []*types.TypeParam
	// Type, Constructor and With name the generated type and its two
	// constructors: from a Breaker, and from prepared circuits.
	Type, Constructor, With string
	// Next is the field holding the wrapped value.
	Next string
	// Fields are the circuits its guarded methods use, in method order.
	Fields []*Field
	// NewNext and NewBreaker are the parameters of Constructor; WithNext
	// the first of With, whose others are the Fields' Params; NewOpts and
	// WithOpts their options, last.
	NewNext, NewBreaker, WithNext string
	NewOpts, WithOpts             string
	// WithRecv and WithOpt are With's locals: the wrapper it makes, and
	// each option.
	WithRecv, WithOpt string
	// Option is the type of the constructors' options, and WithFallback
	// the function making the option that sets the fallback, held in the
	// field Fallback; FallbackParam and OptionRecv are the names inside
	// WithFallback.
	Option, WithFallback, Fallback string
	FallbackParam, OptionRecv      string
	// Methods are the interface's methods, embedded ones included.
	Methods []*Method
	// iface is the interface's type, for the methods returning it.
	iface types.Type
}

// Field is a wrapper's field holding one circuit.
type Field struct {
	Circuit *Circuit
	// Policy is the circuit's policy variable.
	Policy *Policy
	// Name is the field's name; Param the parameter of the wrapper's
	// With constructor that sets it.
	Name, Param string
}

// Method is one method of a guarded interface.
type Method struct {
	// Name is the method's name.
	Name string
	// Params are the parameters, named; Variadic marks the last as ...T.
	Params   []Var
	Variadic bool
	// Results are the results; a guarded method's are named as locals,
	// but for its last error.
	Results []Var
	// Recv is the receiver's name.
	Recv string
	// Skip marks a method that calls next directly.
	Skip bool
	// Field is the wrapper's field of the method's circuit.
	Field *Field
	// Classify is the method's classifier.
	Classify *Classifier
	// Ctx is the index of the first context.Context parameter, passed to
	// the breaker, or -1.
	Ctx int
	// Request is the index of a *net/http.Request parameter, or -1:
	// when there is no Ctx, its Context is passed to the breaker.
	Request int
	// Readers are the indexes of the parameters, interfaces or pointers,
	// that implement io.Reader (http.Client.Post's body): next may have
	// read one, which cannot be made again for a fallback.
	Readers []int
	// Shape is how the method reports its error.
	Shape Shape
	// ErrMethod is the method of a Carrier's or Reported's result that
	// reports its error: Err, Error (Error() error) or FirstErr.
	ErrMethod string
	// Row is the row type a Row method returns, and the stream type a
	// Stream method does.
	Row *RowType
	// Elem is the element type of a Seq method's iter.Seq2[Elem, error].
	Elem types.Type
	// Reject is how a Reported method makes a result carrying a
	// rejection.
	Reject Reject
	// Returns are the results whose interface a wrapper of the file
	// guards: they come back guarded, on the method's Breaker.
	Returns []Returned
	// guardReturned is the method's guard_returned option.
	guardReturned bool
	// Fallback is when the wrapper's fallback answers the method.
	Fallback FallbackMode
	// Failed is the local recording that the classifier counted a
	// Failure (FallbackFailed), Outcome the classifier's outcome there;
	// Open the *circuit.OpenError a rejection is matched into; Replay and
	// ReplayErr GetBody's results, the request's body made again for the
	// fallback of a failure.
	Failed, Outcome, Open, Replay, ReplayErr string
	// Err is the local holding the guarded call's error, and CallErr the
	// one inside the circuit holding next's; Ran, set when the request's
	// body needs closing on rejection (or, for Reported, to tell a
	// rejection), records that next ran.
	Err, CallErr, Ran string
	// Op is an ErrorLast method's operation, Quiet its circuit's quiet
	// admission (circuit.Quiet) and O the operation's outcome there.
	Op, Quiet, O string
	// Ticket, Settled, Yield and Value are the locals of the deferred
	// shapes (Row, Seq, Stream): the admitted call, whether it was
	// settled, the iterator's yield and the element it passes on; Stop a
	// Stream's, the stop of its context's AfterFunc. Opened records that
	// next returned what settles the call (a Row's, a Stream's, an opened
	// Seq's); an opened Seq's OpenErr is its error at open, Ranged that its
	// iterator was ranged, RangeTicket and RangeErr a range's admission.
	Ticket, Settled, Yield, Value, Stop, Opened string
	OpenErr, Ranged, RangeTicket, RangeErr      string
}

// FallbackMode is when a wrapper's fallback answers a guarded method.
type FallbackMode int

const (
	// FallbackNever: the method never falls back.
	FallbackNever FallbackMode = iota
	// FallbackRejected: the fallback answers when the circuit rejects the
	// call.
	FallbackRejected
	// FallbackFailed: also when the call ran and the classifier counted a
	// Failure.
	FallbackFailed
)

// Returned is a result of a method that comes back guarded: its index,
// and the wrapper that guards it.
type Returned struct {
	Result  int
	Wrapper *Wrapper
}

// RowType is the type a Row or Stream method returns: it implements the
// method's result interface, forwarding to the row or stream next
// returned, and settles the call where its error surfaces: a row's in
// Scan, a stream's in Recv.
type RowType struct {
	// Name is the type's name.
	Name string
	// Iface is the result's type; Methods its methods, Scan (a row's) or
	// Recv (a stream's) among them.
	Iface   types.Type
	Methods []*types.Func
	// Stream marks a Stream method's stream, whose Recv settles the call.
	Stream bool
	// Next, Ctx, Ticket and Err are its fields: the row next returned, the
	// call's context, its Ticket, and the rejection when it was rejected
	// (a stream has none: a rejected call returns no stream). Stop is a
	// stream's field holding the stop of its context's AfterFunc.
	Next, Ctx, Ticket, Err, Stop string
	// Recv is its methods' receiver, ScanErr and DoneErr Scan's (and
	// Recv's) locals holding the row's error and the settlement's, Value
	// Recv's holding the message, and Params the names of its methods'
	// parameters, in order.
	Recv, ScanErr, DoneErr, Value string
	Params                        []string
}

// Reject is how a Reported method makes a result that carries a
// rejection: one of its fields is set.
type Reject struct {
	// Func is a constructor from an error of the result's package
	// (franz-go's kgo.NewErrFetch, func(error) T; or a function of more
	// parameters, given zero values, as constructor in types.go says).
	Func *types.Func
	// Slice marks a slice of structs with an Err error field (franz-go's
	// kgo.ProduceResults): the result is one element with Err set.
	Slice bool
	// SQLRow marks a *database/sql.Row: the file's SQLRow helper makes
	// one.
	SQLRow bool
}

// Shape is how a guarded method reports its error. Each shape is checked
// in model/method.go (errorResult) and rendered in render/method.go
// (guardedBody, or builder for a Builder); a new one is a constant here
// and a case in each.
type Shape int

const (
	// ErrorLast is a method whose last result is error.
	ErrorLast Shape = iota
	// Carrier is a method whose only result carries its error: its Err()
	// error or Error() error method reports it, and SetErr(error) sets it
	// on rejection.
	Carrier
	// Row is a method whose only result is an interface whose
	// Scan(...) error reports the call's error (pgx.Row), or that returns
	// (R, error) with R such a row or a cursor (pgx's Query): the wrapper
	// admits the call, an error at open settles it, and the row it returns
	// settles it in Scan, or a cursor at its end.
	Row
	// Seq is a method whose only result is an iter.Seq2[T, error]: the
	// call is admitted when iteration starts and settled by the first
	// error or a clean end. One returning (iter.Seq2[T, error], error) is
	// admitted at the call, and an error at open settles it.
	Seq
	// Reported is a method whose only result reports its error with
	// Err() error, Error() error or FirstErr() error but cannot be set
	// (franz-go's kgo.Fetches, *sql.Row): it is classified through that
	// method, and a rejection is a result made as Reject says.
	Reported
	// Stream is a method returning (S, error) whose S is an interface
	// with Recv() (T, error) and no Send, a server stream (gRPC's
	// grpc.ServerStreamingClient[T]): the wrapper admits the call, an
	// error at open settles it, and the stream it returns settles it at
	// Recv's first error (io.EOF a Success), at CloseSend, or when the
	// call's context is cancelled (Ignored).
	Stream
	// Builder is a method whose only result is an interface this run
	// also guards, or an instance of one (etcd's KV.Txn returning
	// clientv3.Txn, and Txn's If, Then and Else): it takes no claim and
	// returns next's result guarded, on the caller's circuits where names
	// match. The error surfaces at
	// the builder's terminal call (Txn's Commit), a method of that
	// interface guarded as its shape says.
	Builder
)

// Var is a parameter or result: its name in the generated code, the name
// it was declared with, and its type.
type Var struct {
	Name, Declared string
	Type           types.Type
}

// Classifier maps a call's result to a circuit.Outcome: a generated
// function, or one the user names with classifier=.
type Classifier struct {
	// Func is the user's function, for classifier=; the rest is unset
	// but Result.
	Func *types.Func
	// Name is the generated function's name; ErrName, for one with no
	// Result, the function it calls to classify a non-nil error, so that
	// Name's nil check inlines into the call.
	Name, ErrName string
	// Errors are the selected errors, in the order given.
	Errors []ErrorMatch
	// Statuses are the selected HTTP statuses.
	Statuses []spec.StatusRange
	// StatusErrors are the error types of the client's packages holding
	// a status that circuit.ErrorStatus cannot read, with Statuses.
	StatusErrors []StatusError
	// Codes are the selected gRPC code names.
	Codes []string
	// Result is the index of the result passed to the classifier with the
	// error, or -1.
	Result int
	// ResultType is that result's type; ResultKind how its status is read.
	ResultType types.Type
	ResultKind StatusKind
	// Ctx marks a classifier that takes the call's context first and
	// returns Ignored for an error of a call whose context the caller
	// cancelled: every generated one but those selecting
	// context.Canceled.
	Ctx bool
	// Circuits are the names of the circuits whose methods use it.
	Circuits []string
	// iface and method are the interface and method that use it first.
	iface, method string
	// Locals are the names of its parameters and locals.
	Locals ClassifierLocals
}

// ClassifierLocals are the parameters and locals of a generated
// classifier.
type ClassifierLocals struct {
	Ctx, Err, Result string
	Targets          []string // one per errors.As target: Errors', then StatusErrors'
	Code, OK         string
	// Status is the gRPC status read from the error, for codes=.
	Status string
}

// ErrorMatch is one selected error: a variable or constant matched with
// errors.Is, or a type with errors.As.
type ErrorMatch struct {
	// Value is the variable (*types.Var) or constant (*types.Const), or
	// nil.
	Value types.Object
	// Type is the type, when Value is nil.
	Type types.Type
}

// StatusError is an error type that holds an HTTP status in an int field
// (HTTPStatusCode int, as Stripe's stripe.Error) or behind a method
// returning int other than StatusCode and HTTPStatusCode (Code() int),
// which circuit.ErrorStatus does not read: a classifier selecting
// statuses matches it with errors.As, then reads Read.
type StatusError struct {
	// Type is the errors.As target's type: T when T implements error, else
	// *T.
	Type types.Type
	// Read is the field or method holding the status; Method marks a
	// method.
	Read   string
	Method bool
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

// Import paths generated code uses.
const (
	CircuitPath    = "github.com/circuitgen/circuitgen/runtime/circuit"
	GRPCStatusPath = "google.golang.org/grpc/status"
	GRPCCodesPath  = "google.golang.org/grpc/codes"
)
