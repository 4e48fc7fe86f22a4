// Package notify keeps the functions a store reports to through
// driver.Notifier, for the stores of this repository.
package notify

import "sync"

// List is the functions a store reports to. Its zero value is empty and
// ready. It is safe for concurrent use.
type List struct {
	mu  sync.Mutex
	fns []func(error)
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
