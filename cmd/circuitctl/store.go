package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"time"

	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

// storeEnv names the store when -store is not given.
const storeEnv = "CIRCUITGEN_STORE"

// errNoStore is the usage error when neither -store nor $CIRCUITGEN_STORE
// names a store.
var errNoStore = errors.New("no store: pass -store URL or set " + storeEnv + " (for example file:///var/lib/myapp/circuits)")

// storeFlags are the flags of the commands that work on a store.
type storeFlags struct {
	url     *string
	timeout *time.Duration
}

// addStoreFlags defines -store and -timeout on fs.
func addStoreFlags(fs *flag.FlagSet) storeFlags {
	return storeFlags{
		url:     fs.String("store", "", "the store's URL: file:///dir, redis://…, unix://…, postgres://… or sqlite:///file.db (default $"+storeEnv+")"),
		timeout: fs.Duration("timeout", 30*time.Second, "give up on the store after this long"),
	}
}

// target returns the store's URL: -store's, else $CIRCUITGEN_STORE.
func (f storeFlags) target() (string, error) {
	raw := *f.url
	if raw == "" {
		raw = os.Getenv(storeEnv)
	}
	if raw == "" {
		return "", errNoStore
	}
	return raw, nil
}

// context returns a context that ends at the timeout or on an interrupt,
// and the function that releases it.
func (f storeFlags) context() (context.Context, func()) {
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ctx, cancel := context.WithTimeout(sig, *f.timeout)
	return ctx, func() { cancel(); stop() }
}

// open opens the store the flags (or the environment) name, with a context
// that ends at the timeout or on an interrupt, and renew, which gives a new
// one of those (for the write that follows a confirmation, however long the
// operator took to answer). The caller calls done.
func (f storeFlags) open() (st opened, ctx context.Context, renew func() (context.Context, context.CancelFunc), done func(), err error) {
	raw, err := f.target()
	if err != nil {
		return opened{}, nil, nil, nil, err
	}
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	renew = func() (context.Context, context.CancelFunc) { return context.WithTimeout(sig, *f.timeout) }
	ctx, cancel := renew()
	s, err := storeurl.Open(ctx, raw)
	if err != nil {
		cancel()
		stop()
		return opened{}, nil, nil, nil, err
	}
	st = opened{Store: s, where: storeurl.Redact(raw)}
	return st, ctx, renew, func() { _ = st.Close(); cancel(); stop() }, nil
}

// opened is the store the command works on, and its URL with any password
// hidden, for what the command says.
type opened struct {
	storeurl.Store
	where string
}

// String returns the store's URL, its password hidden.
func (o opened) String() string { return o.where }
