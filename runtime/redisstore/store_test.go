package redisstore_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// validRecord stores a valid record for name and returns it.
func validRecord(t *testing.T, s *redisstore.Store, name string) *driver.Record {
	t.Helper()
	_, now, err := s.Load(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	rec := machine.Cleared(nil, name, now, driver.NewID) // a closed record
	if err := s.Replace(t.Context(), name, nil, rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

// The positions of a stored record's fields (see record.go).
const (
	fieldFormat = iota
	fieldIncarnation
	fieldVersion
	fieldWriteID
	fieldName
	fieldState
	fieldFailures
	fieldGeneration
	fieldOpenUntil
	fieldProbeToken
	fieldLeaseUntil
	fieldUpdatedAt
	numFields
)

func TestCorruptRecords(t *testing.T) {
	const name = "billing-api"
	tests := []struct {
		name  string
		spoil func(ctx context.Context, c *redis.Client, key string) error
	}{
		{"Hash", func(ctx context.Context, c *redis.Client, key string) error {
			return errors.Join(c.Del(ctx, key).Err(), c.HSet(ctx, key, "state", "closed").Err())
		}},
		{"List", func(ctx context.Context, c *redis.Client, key string) error {
			return errors.Join(c.Del(ctx, key).Err(), c.RPush(ctx, key, "x").Err())
		}},
		{"Empty", setValue("")},
		{"Garbage", setValue("not a record")},
		{"JSON", setValue(`{"v":1,"name":"billing-api","state":"closed"}`)},
		{"UnknownState", setField(fieldState, "ajar")},
		{"UnknownFormat", setField(fieldFormat, "1")},
		{"MissingField", editFields(func(f []string) []string { return append(f[:fieldGeneration], f[fieldGeneration+1:]...) })},
		{"ExtraField", editFields(func(f []string) []string { return append(f, "red") })},
		{"TrailingSpace", editFields(func(f []string) []string { return append(f, "") })},
		{"TabSeparated", func(ctx context.Context, c *redis.Client, key string) error {
			v, err := c.Get(ctx, key).Result()
			if err != nil {
				return err
			}
			return c.Set(ctx, key, strings.Replace(v, " ", "\t", 1), 0).Err()
		}},
		{"MissingWriteID", setField(fieldWriteID, "")},
		{"MissingIncarnation", setField(fieldIncarnation, "")},
		{"MissingUpdatedAt", setField(fieldUpdatedAt, "")},
		{"SignedInteger", setField(fieldFailures, "+1")},
		{"LeadingZero", setField(fieldVersion, "01")},
		{"NegativeInteger", setField(fieldGeneration, "-1")},
		{"ZeroVersion", setField(fieldVersion, "0")},
		{"HugeInteger", setField(fieldGeneration, "18446744073709551616")},
		{"BadTime", setField(fieldUpdatedAt, "yesterday")},
		{"NonUTCTime", setField(fieldUpdatedAt, "2030-01-02T03:04:05+01:00")},
		{"NonCanonicalTime", setField(fieldUpdatedAt, "2030-01-02T03:04:05.100Z")},
		{"Inconsistent", setField(fieldProbeToken, "abc")},
		{"ClosedWithDeadline", setField(fieldOpenUntil, "2030-01-02T03:04:05Z")},
		{"OtherCircuit", setField(fieldName, "payments")},
		{"BadName", setField(fieldName, "1billing")},
		{"FailuresOutOfRange", setField(fieldFailures, "1001")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newStore(t)
			ctx := t.Context()
			validRecord(t, s, name)
			if err := tt.spoil(ctx, c, s.Key(name)); err != nil {
				t.Fatal(err)
			}
			rec, _, err := s.Load(ctx, name)
			if !errors.Is(err, driver.ErrCorrupt) {
				t.Fatalf("Load = %+v, %v; want an error matching driver.ErrCorrupt", rec, err)
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
			if rec, _, err := s.Load(ctx, name); err != nil || rec == nil || rec.State != circuit.StateClosed || rec.Failures != 0 {
				t.Fatalf("Load after Clear = %+v, %v; want a closed record, no failures", rec, err)
			}
		})
	}
}

// TestRecordLayout checks the stored value field by field, and that every
// record a Breaker writes decodes back to itself.
func TestRecordLayout(t *testing.T) {
	s, c := newStore(t)
	ctx := t.Context()
	const name = "billing-api"
	rec := validRecord(t, s, name)
	v, err := c.Get(ctx, s.Key(name)).Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stored: %q (%d bytes)", v, len(v))
	f := strings.Split(v, " ")
	if len(f) != numFields {
		t.Fatalf("%d fields, want %d", len(f), numFields)
	}
	want := map[int]string{
		fieldFormat: "2", fieldIncarnation: rec.Incarnation, fieldVersion: "1", fieldName: name,
		fieldState: "closed", fieldFailures: "0", fieldGeneration: "1", fieldOpenUntil: "",
		fieldProbeToken: "", fieldLeaseUntil: "", fieldUpdatedAt: rec.UpdatedAt.UTC().Format(time.RFC3339Nano),
	}
	for i, w := range want {
		if f[i] != w {
			t.Errorf("field %d = %q, want %q", i, f[i], w)
		}
	}
	if len(f[fieldWriteID]) != 32 {
		t.Errorf("write id %q, want 32 hex digits", f[fieldWriteID])
	}
	// Every state round-trips.
	open := *rec
	open.Version, open.State, open.Failures, open.OpenUntil = 2, circuit.StateOpen, 3, rec.UpdatedAt.Add(time.Minute+123*time.Nanosecond)
	half := open
	half.Version, half.State, half.OpenUntil, half.ProbeToken, half.LeaseUntil = 3, circuit.StateHalfOpen, time.Time{}, driver.NewID(), open.OpenUntil.Add(time.Second)
	prev := rec
	for _, next := range []*driver.Record{&open, &half} {
		if err := s.Replace(ctx, name, prev, next); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Load(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, normalized(next)) {
			t.Errorf("Load = %+v, want %+v", got, next)
		}
		prev = next
	}
}

// normalized returns r with its times in UTC, as stores return them.
func normalized(r *driver.Record) *driver.Record {
	n := *r
	utc := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return t.UTC()
	}
	n.OpenUntil, n.LeaseUntil, n.UpdatedAt = utc(n.OpenUntil), utc(n.LeaseUntil), utc(n.UpdatedAt)
	return &n
}

// TestReplaceRefusesUnreadableRecords checks that Replace writes nothing
// that Load could not read back.
func TestReplaceRefusesUnreadableRecords(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	const name = "billing-api"
	rec := validRecord(t, s, name)
	spaced := *rec
	spaced.Version, spaced.State, spaced.ProbeToken, spaced.LeaseUntil = 2, circuit.StateHalfOpen, "a b", rec.UpdatedAt.Add(time.Second)
	inconsistent := *rec
	inconsistent.Version, inconsistent.ProbeToken = 2, "abc"
	other := *rec
	other.Version, other.Name = 2, "payments"
	for _, next := range []*driver.Record{&spaced, &inconsistent, &other} {
		if err := s.Replace(ctx, name, rec, next); err == nil || errors.Is(err, driver.ErrConflict) {
			t.Errorf("Replace(%+v) = %v, want a refusal", next, err)
		}
	}
	valid := *rec
	valid.Version = 2
	for _, id := range []string{"a b", ""} {
		if err := redisstore.ReplaceWithWriteID(s, ctx, name, rec, &valid, id); err == nil {
			t.Errorf("Replace with write id %q succeeded", id)
		}
	}
	got, _, err := s.Load(ctx, name)
	if err != nil || got.Version != 1 {
		t.Fatalf("after refused writes: %+v, %v; want version 1 intact", got, err)
	}
}

// setValue stores v as the record's value.
func setValue(v string) func(context.Context, *redis.Client, string) error {
	return func(ctx context.Context, c *redis.Client, key string) error {
		return c.Set(ctx, key, v, 0).Err()
	}
}

// editFields rewrites the stored record's fields with edit.
func editFields(edit func([]string) []string) func(context.Context, *redis.Client, string) error {
	return func(ctx context.Context, c *redis.Client, key string) error {
		v, err := c.Get(ctx, key).Result()
		if err != nil {
			return err
		}
		return c.Set(ctx, key, strings.Join(edit(strings.Split(v, " ")), " "), 0).Err()
	}
}

// setField sets field i of the stored record to v.
func setField(i int, v string) func(context.Context, *redis.Client, string) error {
	return editFields(func(f []string) []string { f[i] = v; return f })
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
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, v1, &v3, "write-3"); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("stale write = %v, want driver.ErrConflict", err)
	}
	// Once another write came in, the replay cannot apply, and conflicts.
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, &v2, &v3, "write-3b"); err != nil {
		t.Fatal(err)
	}
	if err := redisstore.ReplaceWithWriteID(s, ctx, name, v1, &v2, "write-2"); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("replay after another write = %v, want driver.ErrConflict", err)
	}
	rec, _, err := s.Load(ctx, name)
	if err != nil || rec.Version != 3 || rec.Failures != 2 {
		t.Fatalf("stored %+v, %v; want version 3 with 2 failures", rec, err)
	}
}

func TestReplaceOverAnotherTypeIsCorrupt(t *testing.T) {
	s, c := newStore(t)
	const name = "billing-api"
	if err := c.HSet(t.Context(), s.Key(name), "state", "closed").Err(); err != nil {
		t.Fatal(err)
	}
	rec := machine.Cleared(nil, name, time.Now(), driver.NewID) // a closed record
	if err := s.Replace(t.Context(), name, nil, rec); !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("Replace over a hash = %v, want an error matching driver.ErrCorrupt", err)
	}
}

func TestKeyIsPrefixAndHash(t *testing.T) {
	s := open(t, newClient(t, testenv.RedisURL(t)), redisstore.WithPrefix("app:"))
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
