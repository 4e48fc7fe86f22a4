package storeurl_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

// secret is the password every URL below carries; it must never be shown.
const secret = "hunter2-Zq"

// leaks reports whether s shows secret, in any spelling a URL gives it.
func leaks(s string) bool {
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), "h%40nter2", "h@nter2"} {
		if strings.Contains(s, form) {
			return true
		}
	}
	return false
}

// passwordURLs are every URL form that can carry a password, each failing
// in a different place: URL syntax, the driver's parser, the connection,
// the scheme. TestOpenErrors opens them.
var passwordURLs = []struct {
	url, want string
}{
	// PostgreSQL: userinfo, the password and sslpassword parameters.
	{"postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=1", "postgres"},
	{"postgresql://u:" + secret + "@127.0.0.1:1/db?connect_timeout=1", "postgres"},
	{"postgres://u@127.0.0.1:1/db?password=" + secret + "&connect_timeout=1", "postgres"},
	{"postgres://127.0.0.1:1/db?user=u&password=" + secret + "&connect_timeout=1", "postgres"},
	{"postgres://u@127.0.0.1:1/db?sslpassword=" + secret + "&connect_timeout=1", "postgres"},
	{"postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=x", "postgres URL"},
	{"postgres://u@127.0.0.1:1/db?password=" + secret + "&connect_timeout=x", "postgres URL"},
	{"postgres://u@127.0.0.1:1/db?connect_timeout=x&Password=" + secret, "postgres URL"},
	{"postgres://u:h%40nter2@127.0.0.1:1/db?connect_timeout=x", "postgres URL"},
	{"postgres://u:" + secret + "@127.0.0.1:notaport/db", "store URL"},
	{"postgres://u:" + secret + "@[::1", "store URL"},
	{"postgres://u:" + secret + "/x@127.0.0.1:1/db", "store URL"}, // an unescaped slash ends the host
	{"redis://:" + secret + "/x@127.0.0.1:1/0", "store URL"},
	// A password holding an unescaped #, ? or / that url.Parse accepts:
	// what comes before it reads as the host and an empty or numeric port.
	{"postgres://u:#" + secret + "@127.0.0.1:1/db", "store URL"},
	{"redis://u:2024?" + secret + "@127.0.0.1:1/0", "store URL"},
	{"postgres://u:2024/" + secret + "@127.0.0.1:1/db", "store URL"},
	{"redis://:#" + secret + "@127.0.0.1:1/0", "store URL"},
	// A password holding an unescaped @, and a /, # or ? after it.
	{"postgres://u:ab@" + secret + "/x@127.0.0.1:1/db", "store URL"},
	{"postgres://u:ab@" + secret + "#x@127.0.0.1:1/db", "store URL"},
	{"redis://u:ab@" + secret + "?x@127.0.0.1:1/0", "store URL"},
	// A password holding an unescaped ? and then =: its @ lands in a
	// query value.
	{"postgres://app:1234?c=" + secret + "@127.0.0.1:1/db", "store URL"},
	{"redis://:99?x=" + secret + "@127.0.0.1:1/0", "store URL"},
	{"postgres://app:ab?c=" + secret + "@127.0.0.1:1/db", "store URL"},
	// A URL with no //.
	{"redis:app:" + secret + "@127.0.0.1:1/0", "store URL"},
	// A password holding an unescaped @, before the host's.
	{"postgres://u:at@" + secret + "@127.0.0.1:1/db?connect_timeout=1", "database=db"},
	// Redis: userinfo (with and without a user), TLS, a socket, a query.
	{"redis://:" + secret + "@127.0.0.1:1/0", "redis"},
	{"redis://u:" + secret + "@127.0.0.1:1/0", "redis"},
	{"rediss://u:" + secret + "@127.0.0.1:1/0", "redis"},
	{"unix://u:" + secret + "@/nonexistent/redis.sock?db=0", "redis"},
	{"redis://127.0.0.1:1/0?password=" + secret, "redis URL"},
	{"rediss://127.0.0.1:1/0?password=" + secret + "&prefix=p", "redis URL"},
	{"redis://u:" + secret + "@127.0.0.1:1/0?bogus=1", "redis URL"},
	{"redis://u:" + secret + "@127.0.0.1:1/x", "redis URL"},
	// Schemes that take no password still hide one.
	{"file://u:" + secret + "@/var/lib/circuits", "no user"},
	{"sqlite://u:" + secret + "@/var/lib/c.db?password=" + secret, "sqlite:///absolute/path"},
	{"ftp://u:" + secret + "@host/x?password=" + secret, `unsupported scheme "ftp"`},
}

// TestPasswordNeverShownByServers opens the CI servers with a password in
// every place a URL can carry one: the servers, which set no password,
// accept the connection or refuse it, and neither String nor the error may
// show the password.
func TestPasswordNeverShownByServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Run("postgres", func(t *testing.T) {
		q := url.Values{}
		for _, kv := range strings.Fields(testenv.PostgresDSN(t)) {
			k, v, _ := strings.Cut(kv, "=")
			q.Set(k, v)
		}
		db := q.Get("dbname")
		q.Del("dbname")
		user := q.Get("user")
		q.Del("user")
		for _, u := range []url.URL{
			{Scheme: "postgres", User: url.UserPassword(user, secret), Path: "/" + db, RawQuery: q.Encode()},
			{Scheme: "postgresql", User: url.User(user), Path: "/" + db, RawQuery: q.Encode() + "&password=" + secret},
		} {
			// The server answers; its database may not be migrated.
			s, err := storeurl.Open(ctx, u.String())
			switch {
			case err == nil:
				s.Close()
			case leaks(err.Error()):
				t.Fatalf("the password leaked: %v", err)
			case !strings.Contains(err.Error(), "run Migrate"):
				t.Fatalf("Open(%s): %v", u.Redacted(), err)
			}
			if r := storeurl.Redact(u.String()); leaks(r) || !strings.Contains(r, "xxxxx") {
				t.Errorf("Redact = %q, want the password shown as xxxxx", r)
			}
		}
	})
	t.Run("redis", func(t *testing.T) {
		base, err := url.Parse(testenv.RedisURL(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, user := range []*url.Userinfo{url.UserPassword("", secret), url.UserPassword("default", secret)} {
			u := *base
			u.User = user
			s, err := storeurl.Open(ctx, u.String())
			if err != nil {
				if leaks(err.Error()) {
					t.Fatalf("the password leaked: %v", err)
				}
				continue
			}
			if r := storeurl.Redact(u.String()); leaks(r) || !strings.Contains(r, "xxxxx") {
				t.Errorf("Redact = %q, want the password shown as xxxxx", r)
			}
			s.Close()
		}
	})
}

// TestKeywordDSNPasswordHidden: a libpq key=value DSN given where a URL is
// wanted (as CIRCUITGEN_POSTGRES_DSN is spelled) is refused without its
// password shown.
func TestKeywordDSNPasswordHidden(t *testing.T) {
	raw := "host=/nonexistent user=u password=" + secret + " dbname=db sslmode=disable"
	if s, err := storeurl.Open(t.Context(), raw); err == nil {
		s.Close()
		t.Fatal("Open succeeded")
	} else if leaks(err.Error()) {
		t.Errorf("Open: the password leaked: %v", err)
	}
	if err := storeurl.Migrate(t.Context(), raw); err == nil || leaks(err.Error()) {
		t.Errorf("Migrate: the password leaked: %v", err)
	}
	if r := storeurl.Redact(raw); leaks(r) {
		t.Errorf("Redact = %q: the password leaked", r)
	}
}

// TestParseErrorHidesPasswordPieces: an error of Go's URL parser that
// quotes a piece of the password (a bad escape in it) does not show it.
func TestParseErrorHidesPasswordPieces(t *testing.T) {
	raw := "postgres://u:pa%zzss@127.0.0.1:1/db"
	s, err := storeurl.Open(t.Context(), raw)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded")
	}
	if strings.Contains(err.Error(), "%zz") || strings.Contains(err.Error(), "pa") {
		t.Errorf("Open: a piece of the password leaked: %v", err)
	}
}
