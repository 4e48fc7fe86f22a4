package circuit

import "github.com/circuitgen/circuitgen/runtime/circuit/driver"

// Store keeps the circuits of a Breaker durably, shared by every Breaker that
// uses it: runtime/filestore for the processes of one server,
// runtime/redisstore and runtime/sqlstore for a fleet. What a store
// implements is documented in package driver.
type Store = driver.Store

// Key returns the lower-case hex SHA-256 of a circuit's name, by which
// stores key its record: a name never reaches a file name or a key chosen
// by a user. Operators find a circuit's file or key with it.
func Key(name string) string { return driver.Key(name) }
