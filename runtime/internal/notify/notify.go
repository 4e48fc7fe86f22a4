// Package notify keeps the functions a store reports to through
// driver.Notifier, for the stores of this repository.
package notify

import "sync"

// List is the functions a store reports to. Its zero value is empty and
// ready. It is safe for concurrent use.
type List struct {
	mu   sync.Mutex
	fns  []func(error)
	last string // the error SendChange sent last
}

// Add adds f to the list.
func (l *List) Add(f func(error)) {
	l.mu.Lock()
	l.fns = append(l.fns, f)
	l.mu.Unlock()
}

// Send calls every function of the list with err, outside the list's lock.
func (l *List) Send(err error) {
	l.mu.Lock()
	fns := l.fns
	l.mu.Unlock()
	for _, f := range fns {
		f(err)
	}
}

// SendChange sends err, as Send does, unless the error SendChange sent
// last says the same: a session that keeps failing for one reason is
// reported once, and again when the reason changes. An error sent to no
// function is not remembered: the next one reaches those added since. A
// nil err sends nothing and forgets the last (the session went live), so
// that the same reason is reported again when it comes back.
func (l *List) SendChange(err error) {
	if err == nil {
		l.mu.Lock()
		l.last = ""
		l.mu.Unlock()
		return
	}
	l.mu.Lock()
	again := err.Error() == l.last
	if len(l.fns) > 0 {
		l.last = err.Error()
	}
	l.mu.Unlock()
	if !again {
		l.Send(err)
	}
}
