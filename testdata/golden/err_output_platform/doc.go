// Package erroutputplatform has an output whose name would build it for
// Windows only, whatever the platforms of what it wraps.
package erroutputplatform
