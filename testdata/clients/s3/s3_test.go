package s3

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// TestS3StatusesOpenTheCircuit drives the AWS SDK's real S3 client against
// a local HTTP server that answers 503: the status, carried by the SDK's
// own error (HTTPStatusCode), opens the circuit, and a rejected call sends
// no request; a 404 is no failure.
func TestS3StatusesOpenTheCircuit(t *testing.T) {
	var requests atomic.Int64
	status := atomic.Int64{}
	status.Store(http.StatusNotFound)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(srv.Close)
	raw := s3.New(s3.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1,
	})
	kit := circuittest.New()
	client := NewGuardedClient(raw, kit.Breaker)
	ctx := context.Background()
	head := func() error {
		_, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
		return err
	}
	for range 6 {
		if err := head(); err == nil {
			t.Fatal("HeadObject of a missing key succeeded")
		}
	}
	if s, _ := kit.Breaker.Snapshot(ctx, "s3"); s.State != circuit.StateClosed || s.Failures != 0 {
		t.Fatalf("after 404s: %+v, want closed with no failure", s)
	}
	status.Store(http.StatusServiceUnavailable)
	for range 5 {
		var open *circuit.OpenError
		if err := head(); err == nil || errors.As(err, &open) {
			t.Fatalf("HeadObject on a 503: %v, want the SDK's error", err)
		}
	}
	if s, _ := kit.Breaker.Snapshot(ctx, "s3"); s.State != circuit.StateOpen {
		t.Fatalf("after 5 503s: %+v, want open", s)
	}
	before := requests.Load()
	var open *circuit.OpenError
	if err := head(); !errors.As(err, &open) {
		t.Fatalf("HeadObject on the open circuit: %v, want the *circuit.OpenError", err)
	}
	if requests.Load() != before {
		t.Errorf("the rejected call sent a request")
	}
}
