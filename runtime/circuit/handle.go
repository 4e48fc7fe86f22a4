package circuit

import (
	"context"

	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Circuit is a named circuit and its policy, validated and bound to the
// store once: the prepared form of Breaker.Run for code that calls the same
// circuit again and again, such as generated guarded clients.
type Circuit struct {
	b   *Breaker
	r   *ref            // holds the name even when err is set
	p   *machine.Policy // nil when err is set
	err error
}

// Circuit returns the named circuit under policy p. An invalid name or
// policy is reported, as a *ConfigError, by every call of the Circuit.
func (b *Breaker) Circuit(name string, p Policy) *Circuit {
	if r := b.known(name); r != nil {
		c := &Circuit{b: b, r: r}
		_, c.p, c.err = b.bindRef(r, p)
		return c
	}
	// A circuit's first handle and its ref are one allocation, so that a
	// call through the handle finds both in adjacent memory.
	both := new(struct {
		c Circuit
		r ref
	})
	c := &both.c
	c.b = b
	r, err := b.refInto(name, &both.r)
	if err != nil {
		both.r.name = name // an invalid name, which no call uses: for Name
		c.r, c.err = &both.r, err
		return c
	}
	c.r = r
	_, c.p, c.err = b.bindRef(r, p)
	return c
}

// Breaker returns the Breaker the circuit belongs to: generated clients
// guard the interfaces their methods return on it.
func (c *Circuit) Breaker() *Breaker { return c.b }

// Name returns the circuit's name.
func (c *Circuit) Name() string { return c.r.name }

// Run runs op through the circuit, exactly as Breaker.Run does.
func (c *Circuit) Run(ctx context.Context, op func(context.Context) (Outcome, error)) error {
	if c.err != nil {
		return c.err
	}
	return c.b.run(ctx, c.r, c.p, op)
}

// Allow admits one call to the circuit in the two-step form, exactly as
// Breaker.Allow does: for an operation whose outcome is known only after
// it returns, such as a row whose Scan reports the query's error or an
// iterator. Every Ticket must be settled with Done.
func (c *Circuit) Allow(ctx context.Context) (*Ticket, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c.b.admit(ctx, c.r, c.p)
}
