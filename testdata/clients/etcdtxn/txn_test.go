package etcdtxn

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// kvServer is etcd's KV service answering Txn: Unavailable while down.
type kvServer struct {
	pb.UnimplementedKVServer
	down atomic.Bool
	txns atomic.Int64
}

func (s *kvServer) Txn(context.Context, *pb.TxnRequest) (*pb.TxnResponse, error) {
	s.txns.Add(1)
	if s.down.Load() {
		return nil, status.Error(codes.Unavailable, "etcd: no leader")
	}
	return &pb.TxnResponse{Header: &pb.ResponseHeader{}, Succeeded: true}, nil
}

// serve starts s on an in-process gRPC server and returns etcd's own KV
// client over it.
func serve(t *testing.T, s *kvServer) clientv3.KV {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	pb.RegisterKVServer(srv, s)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return clientv3.NewKVFromKVClient(pb.NewKVClient(conn), nil)
}

// commit runs a transaction built the way etcd's users build one.
func commit(ctx context.Context, kv clientv3.KV) (*clientv3.TxnResponse, error) {
	return kv.Txn(ctx).
		If(clientv3.Compare(clientv3.Version("k"), "=", 0)).
		Then(clientv3.OpPut("k", "v")).
		Else(clientv3.OpGet("k")).
		Commit()
}

// TestTxnBuilderAgainstEtcdClient builds transactions with etcd's own
// client over a real gRPC server: a commit that succeeds is a success, a
// server failing every commit with Unavailable opens the circuit, and a
// commit on the open circuit returns the *circuit.OpenError without
// reaching the server.
func TestTxnBuilderAgainstEtcdClient(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	s := &kvServer{}
	kv := NewGuardedKV(serve(t, s), kit.Breaker)

	if resp, err := commit(ctx, kv); err != nil || !resp.Succeeded {
		t.Fatalf("Commit = %+v, %v; want it succeeded", resp, err)
	}
	s.down.Store(true)
	for i := range 3 {
		_, err := commit(ctx, kv)
		var open *circuit.OpenError
		if status.Code(err) != codes.Unavailable || errors.As(err, &open) {
			t.Fatalf("Commit %d on a server without a leader: %v, want Unavailable", i, err)
		}
	}
	snap, err := kit.Breaker.Snapshot(ctx, "etcd")
	if err != nil {
		t.Fatal(err)
	}
	if snap.State != circuit.StateOpen {
		t.Fatalf("after 3 Unavailable commits: %+v, want open", snap)
	}
	before := s.txns.Load()
	var open *circuit.OpenError
	if _, err := commit(ctx, kv); !errors.As(err, &open) || open.Name != "etcd" {
		t.Fatalf("Commit on the open circuit: %v, want the *circuit.OpenError of etcd", err)
	}
	if after := s.txns.Load(); after != before {
		t.Errorf("the rejected Commit reached the server %d times, want none", after-before)
	}
}

// TestTxnOnPreparedCircuits guards the parent with a circuit the caller
// prepared, under a policy of its own: the transactions it builds run
// through that circuit, so one failure opens it.
func TestTxnOnPreparedCircuits(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	s := &kvServer{}
	s.down.Store(true)
	etcd := kit.Breaker.Circuit("etcd", circuit.Policy{FailureThreshold: 1})
	kv := NewGuardedKVWithCircuits(serve(t, s), etcd)

	if _, err := commit(ctx, kv); status.Code(err) != codes.Unavailable {
		t.Fatalf("Commit on a server without a leader: %v, want Unavailable", err)
	}
	var open *circuit.OpenError
	if _, err := commit(ctx, kv); !errors.As(err, &open) {
		t.Fatalf("Commit after one failure under FailureThreshold 1: %v, want the *circuit.OpenError", err)
	}
	if n := s.txns.Load(); n != 1 {
		t.Errorf("the server saw %d commits, want 1", n)
	}
}
