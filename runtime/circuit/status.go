package circuit

// ErrorStatus returns the HTTP status carried by the first error in err's
// chain that has a StatusCode() int or HTTPStatusCode() int method.
// Generated classifiers use it to count selected statuses.
func ErrorStatus(err error) (int, bool) {
	switch e := err.(type) {
	case interface{ StatusCode() int }:
		return e.StatusCode(), true
	case interface{ HTTPStatusCode() int }:
		return e.HTTPStatusCode(), true
	case interface{ Unwrap() error }:
		return ErrorStatus(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if code, ok := ErrorStatus(inner); ok {
				return code, true
			}
		}
	}
	return 0, false
}
