package driver

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// State is a circuit's state.
type State uint8

const (
	// StateClosed admits every call and counts consecutive failures.
	StateClosed State = iota
	// StateOpen rejects every call until its cooldown ends.
	StateOpen
	// StateHalfOpen has admitted one probe and rejects everyone else until
	// the probe settles or its lease expires.
	StateHalfOpen
)

// String returns "closed", "open" or "half_open".
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateOpen:
		return "open"
	case StateHalfOpen:
		return "half_open"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// ParseState is the inverse of State.String.
func ParseState(s string) (State, error) {
	switch s {
	case "closed":
		return StateClosed, nil
	case "open":
		return StateOpen, nil
	case "half_open":
		return StateHalfOpen, nil
	}
	return 0, fmt.Errorf("unknown circuit state %q", s)
}

// Bounds of a Record's counters, which Check enforces.
const (
	// MaxFailures bounds Record.Failures.
	MaxFailures = 1000
	// MaxReopens bounds Record.Reopens: past it, the cooldown stops
	// doubling (2^MaxReopens cooldowns is far beyond the longest one).
	MaxReopens = 32
	// MaxSuccesses bounds Record.Successes.
	MaxSuccesses = 99
)

// Record is a circuit's durable state: what a Store keeps per circuit.
// Records a Store returns are shared and must not be modified; the Breaker
// always builds a new one.
type Record struct {
	// Name is the circuit's name.
	Name string
	// State is closed, open or half_open.
	State State
	// Failures is the number of consecutive classified failures.
	Failures int
	// Generation grows by one each time a probe closes the circuit, so that
	// calls admitted before the circuit opened cannot touch it afterwards.
	Generation uint64
	// Incarnation is the id of the record's lineage: FirstIncarnation for
	// the record a circuit's first counted outcome creates, a random id for
	// a record made by Clear, an operator (ForceOpen, ForceClosed) or a
	// store that lost the circuit's state, so that no call admitted before
	// can settle against it.
	Incarnation string
	// Version grows by one with every replace; with Incarnation it is what a
	// Store compares before it replaces a record.
	Version uint64
	// OpenUntil is the end of the cooldown (open state), or of an
	// operator's hold when Forced (open or closed state).
	OpenUntil time.Time
	// ProbeToken identifies the current half-open probe.
	ProbeToken string
	// LeaseUntil is when the current probe's claim expires (half_open state).
	LeaseUntil time.Time
	// UpdatedAt is when the record was last replaced.
	UpdatedAt time.Time
	// Successes is the number of half-open probes that succeeded in a row
	// (half_open state).
	Successes int
	// Reopens is the number of times a half-open probe reopened the circuit
	// since it last closed: each doubles the cooldown, up to the policy's
	// longest.
	Reopens int
	// Forced reports that an operator holds the circuit in its state until
	// OpenUntil: open, rejecting every call, or closed, admitting every call
	// and counting no outcome.
	Forced bool
}

// FirstIncarnation is the incarnation of a circuit that has no record: a
// circuit has none until an outcome changes something (a healthy circuit
// never writes one), and the record its first failure creates carries it,
// with Generation 1, so that calls admitted while there was none count
// against it.
const FirstIncarnation = "00000000000000000000000000000000"

// SameRevision reports whether a and b are the same revision of a record:
// both absent, or the same Incarnation and Version. Stores use it for their
// compare-and-swap.
func SameRevision(a, b *Record) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Incarnation == b.Incarnation && a.Version == b.Version
}

// Check reports whether r is internally consistent: a valid name, a known
// state, and exactly the fields that state needs. Stores call it after
// decoding; an inconsistent record is corrupt.
func (r *Record) Check() error {
	if err := CheckName(r.Name); err != nil {
		return err
	}
	if r.Failures < 0 || r.Failures > MaxFailures {
		return fmt.Errorf("failures %d out of range", r.Failures)
	}
	if r.Generation == 0 || r.Version == 0 {
		return fmt.Errorf("generation and version must be positive")
	}
	if len(r.Incarnation) != 32 {
		return fmt.Errorf("incarnation must be 32 hex digits")
	}
	for _, c := range []byte(r.Incarnation) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("incarnation must be 32 hex digits")
		}
	}
	if r.UpdatedAt.IsZero() {
		return fmt.Errorf("updated_at is missing")
	}
	if r.Reopens < 0 || r.Reopens > MaxReopens {
		return fmt.Errorf("reopens %d out of range", r.Reopens)
	}
	if r.Successes < 0 || r.Successes > MaxSuccesses || r.Successes > 0 && r.State != StateHalfOpen {
		return fmt.Errorf("successes %d out of range for a %s record", r.Successes, r.State)
	}
	if r.Forced && r.State == StateHalfOpen {
		return fmt.Errorf("a half_open record cannot be forced")
	}
	switch r.State {
	case StateClosed:
		if r.ProbeToken != "" || !r.LeaseUntil.IsZero() {
			return fmt.Errorf("closed record with a probe token or lease")
		}
		// A forced closed record holds the end of the hold in open_until,
		// and counts nothing.
		if r.Forced == r.OpenUntil.IsZero() {
			return fmt.Errorf("closed record with open_until must be forced, and forced with open_until")
		}
		if r.Forced && (r.Failures != 0 || r.Reopens != 0) {
			return fmt.Errorf("forced closed record with failures or reopens")
		}
	case StateOpen:
		if r.OpenUntil.IsZero() || r.ProbeToken != "" || !r.LeaseUntil.IsZero() {
			return fmt.Errorf("open record needs open_until and no probe")
		}
	case StateHalfOpen:
		// Between two probes of a CloseAfter run, no probe is in flight.
		idle := r.ProbeToken == "" && r.LeaseUntil.IsZero() && r.Successes > 0
		if !idle && (r.ProbeToken == "" || r.LeaseUntil.IsZero()) {
			return fmt.Errorf("half_open record needs a probe token and lease, or successes and neither")
		}
	default:
		return fmt.Errorf("unknown state %d", r.State)
	}
	return nil
}

// MaxNameLen is the longest circuit name, in bytes.
const MaxNameLen = 128

// CheckName reports whether name is a valid circuit name: an ASCII letter,
// then ASCII letters, digits, '.', '_', ':' or '-', at most MaxNameLen bytes.
func CheckName(name string) error {
	if name == "" {
		return errors.New("circuit name is empty")
	}
	if len(name) > MaxNameLen {
		return errors.New("circuit name is longer than 128 bytes")
	}
	if !isLetter(name[0]) {
		return errors.New("circuit name must start with an ASCII letter")
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '.' && c != '_' && c != ':' && c != '-' {
			return errors.New("circuit name may hold only ASCII letters, digits, '.', '_', ':' and '-'")
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

// quoteMax is how many bytes of a name Quote shows.
const quoteMax = 200

// Quote returns name quoted for a log line, an error or a page: whole when
// it is at most 200 bytes, else its first 200 bytes and its length. Names
// read from storage are not checked yet, and may be of any size.
func Quote(name string) string {
	if len(name) <= quoteMax {
		return strconv.Quote(name)
	}
	return strconv.Quote(name[:quoteMax]) + "… (" + strconv.Itoa(len(name)) + " bytes)"
}

// NewID returns a fresh random id: 16 bytes from crypto/rand as 32
// lower-case hex digits, the form of a record's Incarnation and
// ProbeToken. A store that makes a record anew (a lost record made
// unknown) takes its incarnation from it.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
