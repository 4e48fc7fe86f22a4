package circuit

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxNameLen is the longest circuit name, in bytes.
const MaxNameLen = 128

// ValidateName reports whether name is a valid circuit name: an ASCII letter,
// then ASCII letters, digits, '.', '_', ':' or '-', at most MaxNameLen bytes.
// A name is a fixed logical dependency ("billing-api",
// "payment-gateway:refund"), never a URL, an account id or a secret.
// The error is a *ConfigError.
func ValidateName(name string) error {
	if name == "" {
		return &ConfigError{Field: "name", Reason: "circuit name is empty"}
	}
	if len(name) > MaxNameLen {
		return &ConfigError{Field: "name", Value: name[:16] + "…", Reason: "circuit name is longer than 128 bytes"}
	}
	if !isLetter(name[0]) {
		return &ConfigError{Field: "name", Value: name, Reason: "circuit name must start with an ASCII letter"}
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '.' && c != '_' && c != ':' && c != '-' {
			return &ConfigError{Field: "name", Value: name, Reason: "circuit name may hold only ASCII letters, digits, '.', '_', ':' and '-'"}
		}
	}
	return nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Key returns the lower-case hex SHA-256 of name. Stores key records by it,
// so a name never reaches a file name or a key chosen by a user.
func Key(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}
