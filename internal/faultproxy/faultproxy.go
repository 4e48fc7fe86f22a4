// Package faultproxy is a TCP proxy for tests that puts the faults of a
// network between a process and a server: a delay that can grow while
// bytes flow, a direction of one connection held (a one-way blackhole: the
// bytes wait, as TCP retransmits them, and flow again when released), a
// pause of every connection, and resets. Order is kept: a byte is never
// delivered before one sent earlier in the same direction.
package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Direction is one way through a connection.
type Direction int

const (
	// Up is from the client to the server.
	Up Direction = iota
	// Down is from the server to the client.
	Down
)

// Proxy accepts connections on a loopback port and forwards each to its
// target. Its methods are safe for concurrent use.
type Proxy struct {
	ln                    net.Listener
	targetNet, targetAddr string

	mu     sync.Mutex
	delay  time.Duration // added to every chunk read from now on
	conns  map[*Conn]struct{}
	paused bool
	resume chan struct{} // closed when a pause ends
	closed bool
	wg     sync.WaitGroup
}

// Listen returns a proxy on 127.0.0.1 to the server at addr on network
// ("tcp" or "unix").
func Listen(network, addr string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, targetNet: network, targetAddr: addr, conns: map[*Conn]struct{}{}, resume: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetDelay sets the delay of every chunk of bytes read from now on, in both
// directions of every connection: it is delivered d after it was read, or
// after the chunk before it, whichever is later.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Pause stops every byte of every connection, in both directions, until
// Resume.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.paused = true
		p.resume = make(chan struct{})
	}
}

// Resume ends a Pause.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		close(p.resume)
	}
}

// Conns returns the connections open now.
func (p *Proxy) Conns() []*Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := make([]*Conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	return cs
}

// Reset resets every connection open now (RST to both ends) and returns
// how many there were.
func (p *Proxy) Reset() int {
	cs := p.Conns()
	for _, c := range cs {
		c.Reset()
	}
	return len(cs)
}

// Close stops accepting, resets every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Resume()
	p.Reset()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial(p.targetNet, p.targetAddr)
		if err != nil {
			reset(client)
			continue
		}
		c := &Conn{p: p, client: client, server: server}
		c.held[Up], c.held[Down] = make(chan struct{}), make(chan struct{})
		close(c.held[Up])
		close(c.held[Down])
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			reset(client)
			reset(server)
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go c.pipe(Up, client, server)
		go c.pipe(Down, server, client)
	}
}

// gate returns the channel to wait on while the proxy is paused (nil when
// it is not), and the delay.
func (p *Proxy) gate() (<-chan struct{}, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		return p.resume, p.delay
	}
	return nil, p.delay
}

// Conn is one proxied connection.
type Conn struct {
	p              *Proxy
	client, server net.Conn

	mu    sync.Mutex
	held  [2]chan struct{} // closed while the direction flows
	done  bool
	ended atomic.Int32 // directions that ended with an EOF
}

// Hold stops the bytes of one direction of c (they wait in the proxy)
// until Release.
func (c *Conn) Hold(d Direction) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.held[d]:
		c.held[d] = make(chan struct{})
	default:
	}
}

// Release lets the bytes of a held direction flow again.
func (c *Conn) Release(d Direction) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.held[d]:
	default:
		close(c.held[d])
	}
}

// Reset closes both ends of c with a TCP reset where the end is TCP.
func (c *Conn) Reset() {
	c.mu.Lock()
	first := !c.done
	c.done = true
	c.mu.Unlock()
	if first {
		reset(c.client)
		reset(c.server)
		c.Release(Up)
		c.Release(Down)
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	}
}

// flowing returns the channel that is closed while direction d flows.
func (c *Conn) flowing(d Direction) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[d]
}

// chunk is bytes read, and when they may be delivered.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe forwards one direction: a reader stamps each chunk with its
// delivery time, a writer delivers chunks in order once their time has
// come, the direction flows and the proxy is not paused.
func (c *Conn) pipe(d Direction, from, to net.Conn) {
	defer c.p.wg.Done()
	queue := make(chan chunk, 1024)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ch := range queue {
			if wait := time.Until(ch.at); wait > 0 {
				time.Sleep(wait)
			}
			for {
				pause, _ := c.p.gate()
				if pause == nil {
					break
				}
				<-pause
			}
			<-c.flowing(d)
			if _, err := to.Write(ch.b); err != nil {
				c.Reset()
				for range queue {
				}
				return
			}
		}
	}()
	var last time.Time
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			_, delay := c.p.gate()
			at := time.Now().Add(delay)
			if at.Before(last) {
				at = last
			}
			last = at
			queue <- chunk{b: append([]byte(nil), buf[:n]...), at: at}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				// A half close: pass it on once every byte is delivered.
				close(queue)
				wg.Wait()
				if tc, ok := to.(interface{ CloseWrite() error }); ok {
					_ = tc.CloseWrite()
				}
				if c.ended.Add(1) == 2 {
					c.Reset()
				}
				return
			}
			close(queue)
			c.Reset()
			wg.Wait()
			return
		}
	}
}

// reset closes conn, with an RST when it is TCP.
func reset(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// Delay returns the delay SetDelay set.
func (p *Proxy) Delay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

// Ramp makes the delay grow by step every interval until it reaches until,
// and returns then: a link that gets slower and slower without ever going
// silent.
func (p *Proxy) Ramp(step, every, until time.Duration) {
	for d := p.Delay(); d < until; {
		d = min(d+step, until)
		p.SetDelay(d)
		time.Sleep(every)
	}
}
