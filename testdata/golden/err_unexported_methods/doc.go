// Package errunexportedmethods lists an interface with unexported methods.
package errunexportedmethods
