package circuit

type statusCoder interface{ StatusCode() int }

type httpStatusCoder interface{ HTTPStatusCode() int }

// ErrorStatus returns the HTTP status carried by the first error in err's
// chain that has a StatusCode() int or HTTPStatusCode() int method.
// Generated classifiers use it to count selected statuses.
func ErrorStatus(err error) (int, bool) {
	for err != nil {
		switch e := err.(type) {
		case statusCoder:
			return e.StatusCode(), true
		case httpStatusCoder:
			return e.HTTPStatusCode(), true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if code, ok := ErrorStatus(inner); ok {
					return code, true
				}
			}
			return 0, false
		default:
			return 0, false
		}
	}
	return 0, false
}
