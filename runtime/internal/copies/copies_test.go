package copies

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func closed() *driver.Record {
	return &driver.Record{Name: "billing-api", State: circuit.StateClosed, Generation: 1, Version: 1}
}

// TestInstall checks when a read from the server becomes a copy: only a
// closed record, read while the stream was live, with no invalidation of
// its key and no loss of the stream while it was in flight.
func TestInstall(t *testing.T) {
	tests := []struct {
		name   string
		live   bool
		rec    *driver.Record
		during func(c *Cache, e *Entry) // between the read's begin and its install
		want   bool
	}{
		{"Closed", true, closed(), nil, true},
		{"NotLive", false, closed(), nil, false},
		{"Absent", true, nil, nil, true},
		{"AbsentNotLive", false, nil, nil, false},
		{"AbsentKeyInvalidated", true, nil, func(c *Cache, e *Entry) { c.InvalidateKey("k") }, false},
		{"Open", true, &driver.Record{Name: "billing-api", State: circuit.StateOpen}, nil, false},
		{"KeyInvalidated", true, closed(), func(c *Cache, e *Entry) { c.InvalidateKey("k") }, false},
		{"OwnWrite", true, closed(), func(c *Cache, e *Entry) { e.Invalidate() }, false},
		{"AllInvalidated", true, closed(), func(c *Cache, e *Entry) { c.InvalidateAll() }, false},
		{"StreamLost", true, closed(), func(c *Cache, e *Entry) { c.Down() }, false},
		{"StreamLostAndBack", true, closed(), func(c *Cache, e *Entry) { c.Down(); c.Up(c.Session()) }, false},
		{"OtherKeyInvalidated", true, closed(), func(c *Cache, e *Entry) { c.InvalidateKey("other") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			if tt.live {
				c.Up(c.Session())
				c.Heard(c.Clock(), time.Minute)
			}
			e := c.Entry("k")
			c.Entry("other")
			r := c.Begin(e)
			if tt.during != nil {
				tt.during(c, e)
			}
			c.Install(e, r, tt.rec)
			cp, got := e.Copy()
			if got != tt.want {
				t.Fatalf("copy installed: %v, want %v", got, tt.want)
			}
			if got && (cp == nil) != (tt.rec == nil) {
				t.Fatalf("copy %+v of record %+v", cp, tt.rec)
			}
			if tt.want && tt.rec != nil && (!c.IsCopy(cp) || c.IsCopy(tt.rec)) {
				t.Fatal("IsCopy must recognise the copy, and only it, not the record read")
			}
		})
	}
}

// TestFresh checks that copies are served only within the stall bound of
// the last time the servers were heard from, and not at all once the
// stream is down.
func TestFresh(t *testing.T) {
	c := New()
	if c.Fresh() {
		t.Fatal("fresh before anything was heard")
	}
	c.Up(c.Session())
	c.Heard(c.Clock(), 50*time.Millisecond)
	if !c.Fresh() {
		t.Fatal("not fresh just after hearing from the servers")
	}
	time.Sleep(60 * time.Millisecond)
	if c.Fresh() {
		t.Fatal("fresh beyond the stall bound")
	}
	c.Heard(c.Clock(), time.Minute)
	c.Down()
	if c.Fresh() || c.Live() {
		t.Fatal("fresh or live after Down")
	}
}

// TestCreated: the invalidation of a copy of no record says the key was
// written since; that of a record's copy, or of no copy, does not; a read
// that finds the key forgets it.
func TestCreated(t *testing.T) {
	c := New()
	c.Up(c.Session())
	c.Heard(c.Clock(), time.Minute)
	for _, tt := range []struct {
		name string
		rec  *driver.Record // installed before the invalidation; nil: none
		copy bool           // whether a copy is installed at all
		want bool
	}{
		{"CopyOfNone", nil, true, true},
		{"CopyOfRecord", closed(), true, false},
		{"NoCopy", nil, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := c.Entry(tt.name)
			if tt.copy {
				c.Install(e, c.Begin(e), tt.rec)
			}
			e.Invalidate()
			if got := e.Created(); got != tt.want {
				t.Fatalf("Created after the invalidation = %v, want %v", got, tt.want)
			}
			e.Found(c.Begin(e))
			if e.Created() {
				t.Fatal("Created after Found")
			}
		})
	}
}

// TestDownInfersNothing: the stream's loss drops a copy of none without
// taking it for a creation: the server named no key.
func TestDownInfersNothing(t *testing.T) {
	c, e := copyOfNone()
	c.Down()
	if e.Created() {
		t.Fatal("Created after Down dropped a copy of none")
	}
	if _, ok := e.Copy(); ok {
		t.Fatal("a copy after Down")
	}
}

// TestDropInfersNothing: the process's own write drops its copy of none
// without taking it for a creation, since the write may have been refused;
// reads in flight cannot install a copy after it.
func TestDropInfersNothing(t *testing.T) {
	c, e := copyOfNone()
	r := c.Begin(e)
	e.Drop()
	if e.Created() {
		t.Fatal("Created after Drop of a copy of none")
	}
	if _, ok := e.Copy(); ok {
		t.Fatal("a copy after Drop")
	}
	c.Install(e, r, nil)
	if _, ok := e.Copy(); ok {
		t.Fatal("a read begun before Drop installed its copy")
	}
}

// TestFoundKeepsALaterCreation: a read that found the key forgets a
// creation the server reported before it began, not one reported while it
// was in flight: that read may have found the key before the record existed
// (a tombstone), and a later absence of the record is a loss.
func TestFoundKeepsALaterCreation(t *testing.T) {
	c, e := copyOfNone()
	r := c.Begin(e)
	e.Invalidate() // another process creates the record
	e.Found(r)     // the read that began before it found the tombstone
	c.Install(e, r, nil)
	if !e.Created() {
		t.Fatal("a creation reported during a read forgotten when the read found the key")
	}
	e.Found(c.Begin(e)) // a read that began after it
	if e.Created() {
		t.Fatal("Created after a read that began after the creation found the key")
	}
}

// TestInvalidateAllInfersNothing: a TRUNCATE (sqlstore's notice naming no
// key) drops every copy without taking a copy of none for a creation.
func TestInvalidateAllInfersNothing(t *testing.T) {
	c, e := copyOfNone()
	c.InvalidateAll()
	if e.Created() {
		t.Fatal("Created after InvalidateAll dropped a copy of none")
	}
	if _, ok := e.Copy(); ok {
		t.Fatal("a copy after InvalidateAll")
	}
}

// TestUpAfterDownInTheSession: once one connection of a session went down,
// another's first answer does not make the stream live again: the session
// no longer hears every invalidation.
func TestUpAfterDownInTheSession(t *testing.T) {
	c := New()
	s := c.Session()
	c.Down()
	c.Up(s)
	if c.Live() {
		t.Fatal("live after a Down in the same session")
	}
	c.Up(c.Session())
	if !c.Live() {
		t.Fatal("a new session did not go live")
	}
}

// copyOfNone returns a live cache whose entry billing-api holds a copy of
// no record.
func copyOfNone() (*Cache, *Entry) {
	c := New()
	c.Up(c.Session())
	c.Heard(c.Clock(), time.Minute)
	e := c.Entry("billing-api")
	c.Install(e, c.Begin(e), nil)
	return c, e
}
