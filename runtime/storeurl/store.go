package storeurl

import (
	"context"
	"fmt"
	"net/url"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Store is an opened store: a circuit.Store that can list its circuits.
type Store struct {
	circuit.Store

	location string
	names    func(context.Context) ([]string, error)
	close    func() error
}

// Names returns the names of the circuits with a record in the store.
// Records that cannot be read are left out and reported in the error, one
// joined error per record, each naming its record (file, key or row).
func (s *Store) Names(ctx context.Context) ([]string, error) { return s.names(ctx) }

// Unwrap returns the store that s opened, so that a Breaker over s uses
// its optional interfaces (circuit.StoreAs): the file store's clock and
// shared window counts, the distributed stores' bound circuits with local
// copies and their batched window counts.
func (s *Store) Unwrap() circuit.Store { return s.Store }

// Notify passes report on to the opened store when it reports what it
// finds (driver.Notifier): an unsafe server setting, a lost dataset.
func (s *Store) Notify(report func(error)) {
	if n, ok := s.Store.(driver.Notifier); ok {
		n.Notify(report)
	}
}

// Close releases the store's connections.
func (s *Store) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}

// String returns the store's URL, its password hidden.
func (s *Store) String() string { return s.location }

// Open opens the store raw names. See the package documentation for the
// URLs it accepts. It checks that the store exists and answers (a directory
// or database file exists, a server answers a ping); it writes nothing.
// Neither its errors nor the Store's String show a password the URL holds,
// in its userinfo or its query (password=, sslpassword=).
func Open(ctx context.Context, raw string) (*Store, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("store URL: %w", redactErr(err, raw))
	}
	s, err := open(ctx, u)
	if err != nil {
		return nil, scrub(err, passwords(u, raw))
	}
	s.location = redact(u)
	return s, nil
}

// open opens the store u names; its errors name the store, password hidden.
func open(ctx context.Context, u *url.URL) (s *Store, err error) {
	loc := redact(u)
	switch u.Scheme {
	case "file":
		s, err = openFile(u)
	case "redis", "rediss", "unix":
		s, err = openRedis(ctx, u)
	case "postgres", "postgresql":
		s, err = openPostgres(ctx, u)
	case "sqlite":
		s, err = openSQLite(ctx, u)
	case "":
		return nil, fmt.Errorf("store URL %q has no scheme: want file:///path/to/dir, redis://, unix://, postgres:// or sqlite:///path/to.db", loc)
	default:
		return nil, fmt.Errorf("store URL %s: unsupported scheme %q: want file, redis, rediss, unix, postgres, postgresql or sqlite", loc, u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", loc, err)
	}
	return s, nil
}

// redactErr replaces a *url.Error, which quotes the whole URL (password and
// all), by its cause.
func redactErr(err error, raw string) error {
	if ue, ok := err.(*url.Error); ok && ue.URL == raw {
		return ue.Err
	}
	return err
}
