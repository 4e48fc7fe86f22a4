// Package testenv gives the project's tests what they need from their
// environment: the servers .ci/services.sh starts, named by environment
// variables, and redis-servers of their own. A test that cannot have what
// it needs (a server, a program) fails when CI=true, since CI must test
// against the real thing, and is skipped otherwise.
package testenv

import (
	"os"
	"testing"
)

// Missing ends the test for want of what msg says: it fails when CI=true
// and is skipped otherwise.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Env returns the value of the environment variable name, which
// .ci/services.sh's function start sets; without it the test is Missing.
func Env(t testing.TB, name, start string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		Missing(t, name+" is not set: no server to test against (source .ci/services.sh and run "+start+")")
	}
	return v
}

// RedisURL returns the URL of the test Redis server, CIRCUITGEN_REDIS_URL.
func RedisURL(t testing.TB) string {
	t.Helper()
	return Env(t, "CIRCUITGEN_REDIS_URL", "start_redis")
}

// PostgresDSN returns the DSN of the test PostgreSQL server,
// CIRCUITGEN_POSTGRES_DSN.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return Env(t, "CIRCUITGEN_POSTGRES_DSN", "start_postgres")
}

// PostgresStandbyDSN returns the DSN of a hot standby of the test
// PostgreSQL server, CIRCUITGEN_POSTGRES_STANDBY_DSN.
func PostgresStandbyDSN(t testing.TB) string {
	t.Helper()
	return Env(t, "CIRCUITGEN_POSTGRES_STANDBY_DSN", "start_postgres_standby")
}
