package generator

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScaffoldSkipsStateReaders checks that the scaffold of a connection
// skips, with a reason, the methods that read its state rather than make
// a call: Err() error and Error() error (the connection's error, not a
// call's), Closed() bool and getters without a context returning no
// error. Guarded, reading them would count, and an open circuit would
// answer them with its *circuit.OpenError. Calls with no context, such as
// Flush() error, are still guarded; a bidi stream is skipped with its own
// reason, and so is a method that returns no error.
func TestScaffoldSkipsStateReaders(t *testing.T) {
	root := moduleTempDir(t, "conn")
	putFile(t, filepath.Join(root, "conn.go"), `package conn

import (
	"context"
	"errors"
)

// ErrClosed is a closed connection.
var ErrClosed = errors.New("conn: closed")

// Stats are a connection's counters.
type Stats struct{ Sent int }

// Duplex is a bidi stream.
type Duplex interface {
	Send(b []byte) error
	Recv() ([]byte, error)
}

// Raw is a stream of any direction (grpc.ClientStream).
type Raw interface {
	SendMsg(m any) error
	RecvMsg(m any) error
	CloseSend() error
}

// Conn is a struct client with state readers.
type Conn struct{}

func (*Conn) Publish(ctx context.Context, subject string, data []byte) error { return nil }
func (*Conn) Flush() error                                                  { return nil }
func (*Conn) Err() error                                                    { return nil }
func (*Conn) Error() error                                                  { return nil }
func (*Conn) LastError() error                                              { return nil }
func (*Conn) Closed() bool                                                  { return false }
func (*Conn) IsClosed() bool                                                { return false }
func (*Conn) Stats() Stats                                                  { return Stats{} }
func (*Conn) SetName(name string)                                           {}
func (*Conn) Chat(ctx context.Context) (Duplex, error)                      { return nil, nil }
func (*Conn) Open(ctx context.Context, method string) (Raw, error)          { return nil, nil }
`)
	source := "github.com/circuitgen/circuitgen/generator/testdata/" + filepath.Base(root) + ".Conn"
	out, err := Scaffold(root, source, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out.Content)
	const stream = "it returns a client, bidi or untyped stream, which the wrapper cannot settle at its end; guard it by hand with Circuit.Allow and Ticket.Done"
	const state = "it reads the client's state and makes no call; guarded, reading it would count and an open circuit would answer it"
	for _, m := range []string{"Err() error", "Error() error", "LastError() error", "Closed() bool", "IsClosed() bool", "Stats() conn.Stats"} {
		name, _, _ := strings.Cut(m, "(")
		want := "\t// " + name + " is skipped: " + state + ".\n\t//circuitgen:skip\n\t" + m + "\n"
		if !strings.Contains(got, want) {
			t.Errorf("scaffold lacks %q:\n%s", want, got)
		}
	}
	for _, want := range []string{
		"\t// SetName is skipped: it returns neither error last nor a result that reports its error.\n\t//circuitgen:skip\n\tSetName(name string)\n",
		"\t// Chat is skipped: " + stream + ".\n\t//circuitgen:skip\n\tChat(ctx context.Context) (conn.Duplex, error)\n",
		"\t// Open is skipped: " + stream + ".\n\t//circuitgen:skip\n\tOpen(ctx context.Context, method string) (conn.Raw, error)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("scaffold lacks %q:\n%s", want, got)
		}
	}
	for _, guarded := range []string{"Publish(ctx context.Context, subject string, data []byte) error", "Flush() error"} {
		if strings.Contains(got, "//circuitgen:skip\n\t"+guarded) {
			t.Errorf("scaffold skips %s, a call:\n%s", guarded, got)
		}
		if !strings.Contains(got, "\t"+guarded+"\n") {
			t.Errorf("scaffold lacks %s:\n%s", guarded, got)
		}
	}

	// The manifest of an interface gives the same reasons.
	putFile(t, filepath.Join(root, "iface.go"), `package conn

import "context"

// Client is an interface client with a state reader.
type Client interface {
	Publish(ctx context.Context, subject string) error
	Err() error
}
`)
	out, err = Scaffold(root, strings.TrimSuffix(source, ".Conn")+".Client", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "      Err: {skip: true} # " + state + "\n"; !strings.Contains(string(out.Content), want) {
		t.Errorf("manifest scaffold lacks %q:\n%s", want, out.Content)
	}
	if want := "      Publish: {}\n"; !strings.Contains(string(out.Content), want) {
		t.Errorf("manifest scaffold lacks %q:\n%s", want, out.Content)
	}
}

// TestScaffoldRefusesQueues checks that the scaffold refuses a queue, an
// interface whose Exec sends the commands its other methods queue
// (go-redis's Pipeliner): a queued command carries no error until Exec
// has run, and an Exec of an empty queue sends nothing. A client's method
// returning a queue is skipped with that reason, and one running a whole
// queue (Pipelined) is guarded.
func TestScaffoldRefusesQueues(t *testing.T) {
	root := moduleTempDir(t, "pipe")
	putFile(t, filepath.Join(root, "pipe.go"), `package pipe

import "context"

// Cmder is a queued command.
type Cmder interface {
	Err() error
	SetErr(err error)
}

// StatusCmd carries its error.
type StatusCmd struct{ err error }

func (c *StatusCmd) Err() error       { return c.err }
func (c *StatusCmd) SetErr(err error) { c.err = err }

// Pipe queues commands; Exec sends them.
type Pipe interface {
	Ping(ctx context.Context) *StatusCmd
	Exec(ctx context.Context) ([]Cmder, error)
}

// Client runs commands, and queues.
type Client interface {
	Ping(ctx context.Context) *StatusCmd
	Pipeline() Pipe
	Pipelined(ctx context.Context, fn func(Pipe) error) ([]Cmder, error)
}
`)
	base := "github.com/circuitgen/circuitgen/generator/testdata/" + filepath.Base(root)
	if _, err := Scaffold(root, base+".Pipe", "", nil); err == nil || !strings.Contains(err.Error(), "interface Pipe is a queue: Exec sends the commands") {
		t.Errorf("Scaffold of a queue: %v, want it refused as a queue", err)
	}
	out, err := Scaffold(root, base+".Client", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"      Pipeline: {skip: true} # it returns pipe.Pipe, a queue: its commands carry no error until it sends them; guard a method that runs a whole queue instead (go-redis's Pipelined)\n",
		"      Pipelined: {}\n",
		"      Ping: {}\n",
	} {
		if !strings.Contains(string(out.Content), want) {
			t.Errorf("scaffold lacks %q:\n%s", want, out.Content)
		}
	}
}
