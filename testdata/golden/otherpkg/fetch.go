package otherpkg

import (
	"context"
	htemplate "html/template"
	"net"
	"net/url"
	ttemplate "text/template"
	"time"
)

// Fetcher returns values of types from other packages, two of them named
// template.
//
//circuitgen:guard circuit=fetch errors=*url.Error,*net.OpError,*io/fs.PathError statuses=500-599
type Fetcher interface {
	Fetch(ctx context.Context, u *url.URL, addr net.Addr) (*url.URL, time.Duration, error)
	Render(ctx context.Context, t *ttemplate.Template, h *htemplate.Template) (map[string][]*htemplate.Template, error)
	Chans(ctx context.Context, in <-chan int, out chan<- int) (chan struct {
		At time.Time `json:"at"`
	}, error)
}
