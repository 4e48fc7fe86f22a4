package circuit

import "github.com/circuitgen/circuitgen/runtime/circuit/driver"

// ValidateName reports whether name is a valid circuit name: an ASCII letter,
// then ASCII letters, digits, '.', '_', ':' or '-', at most 128 bytes.
// A name is a fixed logical dependency ("billing-api",
// "payment-gateway:refund"), never a URL, an account id or a secret.
// The error is a *ConfigError.
func ValidateName(name string) error {
	err := driver.CheckName(name)
	if err == nil {
		return nil
	}
	value := name
	if len(name) > driver.MaxNameLen {
		value = name[:16] + "…"
	}
	return &ConfigError{Field: "name", Value: value, Reason: err.Error()}
}
