package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Store is a store opened from a URL: a *filestore.Store, *redisstore.Store
// or *sqlstore.Store, given to circuit.New as it is, with the methods every
// one of them has.
type Store interface {
	driver.Store
	// Names returns the names of the circuits with a record in the store.
	// Records that cannot be read are left out and reported in the error,
	// one joined error per record, each naming its record (file, key or
	// row).
	Names(ctx context.Context) ([]string, error)
	// Close releases the store's connections, and the client Open made.
	Close() error
}

// Redact returns raw with any password it holds hidden, for messages: in
// its userinfo or its query (password=, sslpassword=, any case).
func Redact(raw string) string {
	u, err := parse(raw)
	if err != nil {
		return "(an unparsable store URL)"
	}
	return redact(u)
}

// Open opens the store raw names. See the package documentation for the
// URLs it accepts. It checks that the store exists and answers (a directory
// or database file exists, a server answers a ping; a SQL database has its
// circuits table and is not a standby: sqlstore.Store.Check); it writes
// nothing.
// Its errors never show a password the URL holds, in its userinfo or its
// query (password=, sslpassword=); Redact hides it in messages of yours.
func Open(ctx context.Context, raw string) (Store, error) {
	u, err := parse(raw)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, u)
	if err != nil {
		return nil, scrub(err, passwords(u, raw))
	}
	return s, nil
}

// Migrate prepares the store raw names for use, as a deployment step: it
// creates or updates the tables of a postgres:// or sqlite:/// database
// (sqlstore.Store.Migrate), and refuses a PostgreSQL standby. A file or
// Redis store has no schema: Migrate only opens and closes it, as Open
// would. Running it again changes nothing.
func Migrate(ctx context.Context, raw string) error {
	u, err := parse(raw)
	if err != nil {
		return err
	}
	ok, err := migrateSQL(ctx, u)
	if !ok {
		var s Store
		if s, err = open(ctx, u); err == nil {
			err = s.Close()
		}
	} else if err != nil {
		err = fmt.Errorf("store %s: %w", redact(u), err)
	}
	if err != nil {
		return scrub(err, passwords(u, raw))
	}
	return nil
}

// open opens the store u names; its errors name the store, password hidden.
func open(ctx context.Context, u *url.URL) (s Store, err error) {
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

// parse parses raw, a store URL. Its error does not quote the URL, nor
// a piece of its password. It refuses an @ a password may hold (strayAt).
func parse(raw string) (*url.URL, error) {
	if strayAt(raw) {
		return nil, errors.New("store URL: an @ after the host, or with no //: escape it (%40), and a password's /, ? and # (%2F, %3F, %23)")
	}
	u, err := url.Parse(raw)
	if err == nil {
		return u, nil
	}
	if ue, ok := err.(*url.Error); ok && ue.URL == raw { // it quotes the whole URL
		err = ue.Err
	}
	pw := rawPassword(raw)
	secrets := []string{pw}
	for i, q := range strings.Split(err.Error(), `"`) {
		if i%2 == 1 && q != "" && strings.Contains(pw, q) { // quoted: a bad escape in it
			secrets = append(secrets, q)
		}
	}
	return nil, fmt.Errorf("store URL: %w", scrub(err, secrets))
}

// strayAt reports whether raw holds an @ where only a password's could
// be: after a host, or anywhere in a URL with no // (redis:u:pw@host). A
// password holding an unescaped /, ? or # ends the host early, and
// url.Parse would read a piece of it as the host and port, the rest as the
// path, query or fragment, which no one place can tell from a query value
// holding an @ (application_name=me@host). So any @ after a host must be
// escaped (%40). A path with no host before it (file:///srv/app@1) may
// hold one: it has no password.
func strayAt(raw string) bool {
	if !strings.Contains(raw, "://") {
		return strings.Contains(raw, "@")
	}
	auth, rest := authority(raw)
	return auth != "" && strings.Contains(rest, "@")
}
