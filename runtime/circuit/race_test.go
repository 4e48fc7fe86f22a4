//go:build race

package circuit_test

// raceEnabled reports a -race build, which runs long tests shorter.
const raceEnabled = true
