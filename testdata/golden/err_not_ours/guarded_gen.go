package notours

// helper is the user's own code, in a file that happens to have the name
// circuitgen writes by default.
func helper() int { return 42 }
