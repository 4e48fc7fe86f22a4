package circuit

import (
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// The names below moved to package driver (what a store implements) or
// became internal (the state machine). They remain here only while the
// repository's stores move to the new names; they are not part of the API.

type (
	Record       = driver.Record
	Binder       = driver.Binder
	BoundStore   = driver.BoundStore
	Clock        = driver.Clock
	WindowStore  = driver.WindowStore
	WindowSharer = driver.WindowSharer
	WindowCells  = driver.WindowCells
	Counts       = driver.Counts
	BucketCounts = driver.BucketCounts
	Grant        = machine.Grant
	Admission    = machine.Admission
)

const (
	WindowBuckets       = driver.WindowBuckets
	FlushEvery          = driver.FlushEvery
	FlushBatch          = driver.FlushBatch
	MaxNameLen          = driver.MaxNameLen
	MaxFailureThreshold = maxFailureThreshold
	MinCooldown         = minCooldown
	MaxCooldown         = maxCooldown
	MinWindow           = minWindow
	MinMinCalls         = minMinCalls
)

var (
	ErrConflict  = driver.ErrConflict
	ErrCorrupt   = driver.ErrCorrupt
	ParseState   = driver.ParseState
	SameRevision = driver.SameRevision
	WindowEpoch  = driver.WindowEpoch
	Bucket       = driver.Bucket
)

func Admit(rec *Record, name string, p Policy, now time.Time, fresh func() string) Admission {
	return machine.Admit(rec, name, p.rules(), now, fresh)
}

func Settle(rec *Record, g Grant, o Outcome, p Policy, now time.Time) *Record {
	return machine.Settle(rec, g, machine.Outcome(o), p.rules(), now)
}
