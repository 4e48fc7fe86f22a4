// Package secret is internal to lib.
package secret

// Token is a type only lib's tree may name.
type Token struct{ ID string }
