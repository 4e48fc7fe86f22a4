package errpackages

import "context"

// API names errors in packages it cannot use.
//
//circuitgen:guard circuit=api
type API interface {
	//circuitgen:circuit api errors=*internal/poll.DeadlineExceededError
	Internal(ctx context.Context) error
	//circuitgen:circuit api errors=nosuch/pkg.Err
	Missing(ctx context.Context) error
	//circuitgen:circuit api errors=example.com/nomodule.Err
	NoModule(ctx context.Context) error
	//circuitgen:circuit api classifier=nosuchpkg.Classify
	Classifier(ctx context.Context) error
}
