package circuit

import (
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Event is something a Breaker learned besides a transition, which an
// operator should hear about: a circuit's state could not be read or
// written (Err is a *StateError, the calls are being refused), or the store
// reported a problem of its own: its dataset was lost or replaced (Err wraps
// driver.ErrLost), or a server setting weakens its guarantees (Err wraps
// driver.ErrUnsafe).
type Event struct {
	// Name is the circuit concerned; empty for the whole store.
	Name string
	// Err says what happened.
	Err error
	// At is when the Breaker learned it, by the local wall clock.
	At time.Time
}

// EventObserver is an Observer that also hears Events. Of a circuit's
// StateErrors it hears the first, then at most one a minute while they go
// on; of the store's reports, every one.
type EventObserver interface {
	Observer
	ObserveEvent(Event)
}

// stateErrorEvery bounds how often a circuit's StateErrors are reported.
const stateErrorEvery = time.Minute

// stateError returns the StateError of r's operation op failing with err,
// and reports it to the EventObservers unless one was reported within
// stateErrorEvery.
func (b *Breaker) stateError(r *ref, op string, err error) *StateError {
	se := &StateError{Name: r.name, Op: op, Err: err}
	if len(b.events) == 0 {
		return se
	}
	now := b.start() // the injected clock, else the monotonic one
	reported := &r.extra().reported
	last := reported.Load()
	if last != nil && now-*last < stateErrorEvery || !reported.CompareAndSwap(last, &now) {
		return se
	}
	e := *se // callers may still mark the returned one as Ran
	b.event(Event{Name: r.name, Err: &e, At: time.Now()})
	return se
}

// event tells the EventObservers of e.
func (b *Breaker) event(e Event) {
	for _, o := range b.events {
		o.ObserveEvent(e)
	}
}

// listen has a store that is a driver.Notifier report to b's observers.
func (b *Breaker) listen(store Store) {
	n, ok := store.(driver.Notifier)
	if !ok {
		return
	}
	n.Notify(func(err error) { b.event(Event{Err: err, At: time.Now()}) })
}
