package nocontext

// TimeoutError is a timeout.
type TimeoutError struct{}

func (TimeoutError) Error() string { return "timeout" }

// Pinger has no context parameters.
//
//circuitgen:guard circuit=pinger errors=TimeoutError
type Pinger interface {
	Ping() error
	Echo(s string) (string, error)
	// The context is not the first parameter: the breaker uses Background.
	Late(s string, ctx interface{ Done() <-chan struct{} }) error
}
