package reported

import (
	"context"
	"database/sql"
	"errors"
)

// ErrBroker is the broker's outage.
var ErrBroker = errors.New("queue: broker unavailable")

// Fetches are polled records; Err reports the poll's error, and there is
// no SetErr, as with franz-go's kgo.Fetches.
type Fetches []Fetch

// Fetch is one partition's fetch.
type Fetch struct{ Err error }

// Err returns the first error of the fetches.
func (fs Fetches) Err() error {
	for _, f := range fs {
		if f.Err != nil {
			return f.Err
		}
	}
	return nil
}

// NewErrFetch returns fetches carrying err.
func NewErrFetch(err error) Fetches { return Fetches{{Err: err}} }

// Results are the results of a produce, as franz-go's kgo.ProduceResults.
type Results []Result

// Result is one record's result.
type Result struct {
	Offset int64
	Err    error
}

// FirstErr returns the first error of the results.
func (rs Results) FirstErr() error {
	for _, r := range rs {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// Queue is a broker client whose results report their own errors.
//
//circuitgen:guard circuit=queue errors=ErrBroker
type Queue interface {
	Poll(ctx context.Context) Fetches
	Produce(ctx context.Context, payloads ...[]byte) Results
	// Offset reads from a database/sql database.
	Offset(ctx context.Context, topic string) *sql.Row
}
