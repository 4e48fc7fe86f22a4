package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/circuitgen/circuitgen/runtime/storetest"
	"github.com/redis/go-redis/v9"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Config{
		Open: func(t *testing.T) circuit.Store {
			s, _ := newStore(t)
			return s
		},
		Corrupt: func(t *testing.T, s circuit.Store, name string) {
			c := newClient(t, redisURL(t))
			if err := c.HSet(t.Context(), s.(*redisstore.Store).Key(name), "state", "ajar").Err(); err != nil {
				t.Fatal(err)
			}
		},
	})
}

// validRecord stores a valid record for name and returns it.
func validRecord(t *testing.T, s *redisstore.Store, name string) *circuit.Record {
	t.Helper()
	_, now, err := s.Load(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	a := circuit.Admit(nil, name, policy, now, newID)
	if err := s.Replace(t.Context(), name, nil, a.Next); err != nil {
		t.Fatal(err)
	}
	return a.Next
}

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

func TestCorruptRecords(t *testing.T) {
	const name = "billing-api"
	tests := []struct {
		name  string
		spoil func(ctx context.Context, c *redis.Client, key string) error
	}{
		{"NotAHash", nil},
		{"UnknownState", hset("state", "ajar")},
		{"UnknownVersion", hset("v", "2")},
		{"MissingField", hdel("generation")},
		{"MissingWriteID", hdel("w")},
		{"UnknownField", hset("colour", "red")},
		{"SignedInteger", hset("failures", "+1")},
		{"LeadingZero", hset("version", "01")},
		{"NegativeInteger", hset("generation", "-1")},
		{"BadTime", hset("updated_at", "yesterday")},
		{"NonUTCTime", hset("updated_at", "2030-01-02T03:04:05+01:00")},
		{"Inconsistent", hset("probe_token", "abc")},
		{"OtherCircuit", hset("name", "payments")},
		{"FailuresOutOfRange", hset("failures", "1001")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newStore(t)
			ctx := t.Context()
			validRecord(t, s, name)
			var err error
			if tt.spoil == nil {
				err = c.Set(ctx, s.Key(name), "not a hash", 0).Err()
			} else {
				err = tt.spoil(ctx, c, s.Key(name))
			}
			if err != nil {
				t.Fatal(err)
			}
			rec, _, err := s.Load(ctx, name)
			if !errors.Is(err, circuit.ErrCorrupt) {
				t.Fatalf("Load = %+v, %v; want an error matching circuit.ErrCorrupt", rec, err)
			}
			b := circuit.New(s)
			ran := false
			err = b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
			var se *circuit.StateError
			if !errors.As(err, &se) || !se.Corrupt() || ran {
				t.Fatalf("Run = %v, ran = %v; want a corrupt StateError and no call", err, ran)
			}
			if err := b.Clear(ctx, name); err != nil {
				t.Fatalf("Clear: %v", err)
			}
			if rec, _, err := s.Load(ctx, name); rec != nil || err != nil {
				t.Fatalf("Load after Clear = %+v, %v; want nil, nil", rec, err)
			}
		})
	}
}

func hset(field, value string) func(context.Context, *redis.Client, string) error {
	return func(ctx context.Context, c *redis.Client, key string) error {
		return c.HSet(ctx, key, field, value).Err()
	}
}

func hdel(field string) func(context.Context, *redis.Client, string) error {
	return func(ctx context.Context, c *redis.Client, key string) error {
		return c.HDel(ctx, key, field).Err()
	}
}

// newID returns a random 32-hex-digit id, as circuit's ids are.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func TestReplayedReplace(t *testing.T) {
	const name = "billing-api"
	s, _ := newStore(t)
	ctx := t.Context()
	v1 := validRecord(t, s, name)
	v2 := *v1
	v2.Version, v2.Failures = 2, 1
	v3 := v2
	v3.Version, v3.Failures = 3, 2

	// A replay of the write that stored v2 (same write id) is reported as
	// applied, and writes nothing again.
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, v1, &v2, "write-2"); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, v1, &v2, "write-2"); err != nil {
		t.Fatalf("replayed run = %v, want nil (already applied)", err)
	}
	// Another write with the same stale prev conflicts.
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, v1, &v3, "write-3"); !errors.Is(err, circuit.ErrConflict) {
		t.Fatalf("stale write = %v, want circuit.ErrConflict", err)
	}
	// Once another write came in, the replay cannot apply, and conflicts.
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, &v2, &v3, "write-3b"); err != nil {
		t.Fatal(err)
	}
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, v1, &v2, "write-2"); !errors.Is(err, circuit.ErrConflict) {
		t.Fatalf("replay after another write = %v, want circuit.ErrConflict", err)
	}
	rec, _, err := s.Load(ctx, name)
	if err != nil || rec.Version != 3 || rec.Failures != 2 {
		t.Fatalf("stored %+v, %v; want version 3 with 2 failures", rec, err)
	}
}

func TestReplaceNotAHashIsCorrupt(t *testing.T) {
	s, c := newStore(t)
	const name = "billing-api"
	if err := c.Set(t.Context(), s.Key(name), "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	a := circuit.Admit(nil, name, policy, time.Now(), newID)
	if err := s.Replace(t.Context(), name, nil, a.Next); !errors.Is(err, circuit.ErrCorrupt) {
		t.Fatalf("Replace over a string = %v, want an error matching circuit.ErrCorrupt", err)
	}
}

func TestKeyIsPrefixAndHash(t *testing.T) {
	s := redisstore.New(nil, "app:")
	if got, want := s.Key("billing-api"), "app:"+circuit.Key("billing-api"); got != want {
		t.Fatalf("Key = %q, want %q", got, want)
	}
}

func TestNoTTL(t *testing.T) {
	s, c := newStore(t)
	validRecord(t, s, "billing-api")
	ttl, err := c.TTL(t.Context(), s.Key("billing-api")).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl != -1 {
		t.Fatalf("TTL = %v, want none (-1)", ttl)
	}
}

func TestLoadUsesServerTime(t *testing.T) {
	s, c := newStore(t)
	before, err := c.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	_, now, err := s.Load(t.Context(), "billing-api")
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if now.Before(before) || now.After(after) {
		t.Fatalf("Load's time %v is not between the server's %v and %v", now, before, after)
	}
}
