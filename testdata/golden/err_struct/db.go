package errstruct

// Client is a struct client.
//
//circuitgen:guard circuit=client errors=context.Canceled
type Client struct{}
