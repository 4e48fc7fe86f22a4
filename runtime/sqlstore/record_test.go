package sqlstore_test

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestPolicyStateFormat upgrades a table of the previous release (no
// policy_state column) holding its rows, reads them, writes policy state,
// and reads a row that a process of the previous release updated since.
func TestPolicyStateFormat(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s, db := b.newStore(t)
			ts := "TEXT"
			if b.dialect == sqlstore.Postgres {
				ts = "TIMESTAMPTZ"
			}
			// The previous release's table, and an open row as it wrote one.
			for _, q := range []string{
				"DROP TABLE circuits",
				`CREATE TABLE circuits (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, state TEXT NOT NULL DEFAULT 'closed',
					failure_count INTEGER NOT NULL DEFAULT 0, generation BIGINT NOT NULL, incarnation TEXT NOT NULL,
					version BIGINT NOT NULL, open_until ` + ts + `, probe_token TEXT, lease_until ` + ts + `, updated_at ` + ts + ` NOT NULL)`,
				`INSERT INTO circuits (id, name, state, failure_count, generation, incarnation, version, open_until, updated_at)
					VALUES (1, 'billing-api', 'open', 3, 2, '0123456789abcdef0123456789abcdef', 5, '2030-01-02T03:04:35Z', '2030-01-02T03:04:05Z')`,
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if _, _, err := s.Load(ctx, "billing-api"); err == nil {
				t.Fatal("Load before Migrate on an old table succeeded; want the missing column reported")
			}
			for range 2 { // Migrate adds the column, once
				if err := s.Migrate(ctx); err != nil {
					t.Fatalf("Migrate over the previous release's table: %v", err)
				}
			}
			rec, _, err := s.Load(ctx, "billing-api")
			if err != nil || rec.State != circuit.StateOpen || rec.Failures != 3 || rec.Version != 5 || rec.Forced || rec.Reopens != 0 {
				t.Fatalf("Load of the old row = %+v, %v", rec, err)
			}

			br := circuit.New(s)
			if err := br.ForceOpen(ctx, "billing-api", time.Hour); err != nil {
				t.Fatal(err)
			}
			snap, err := br.Snapshot(ctx, "billing-api")
			if err != nil || !snap.Forced {
				t.Fatalf("Snapshot after ForceOpen = %+v, %v; want forced", snap, err)
			}
			var ps string
			if err := db.QueryRowContext(ctx, "SELECT policy_state FROM circuits WHERE name = 'billing-api'").Scan(&ps); err != nil || ps != "6 0 0 1" {
				t.Errorf("policy_state = %q, %v; want %q", ps, err, "6 0 0 1")
			}

			// A process of the previous release updates the row, leaving
			// policy_state as it was: it is a leftover, read as absent.
			if _, err := db.ExecContext(ctx, `UPDATE circuits SET state = 'closed', failure_count = 0, version = 7, open_until = NULL
				WHERE name = 'billing-api'`); err != nil {
				t.Fatal(err)
			}
			rec, _, err = s.Load(ctx, "billing-api")
			if err != nil || rec.State != circuit.StateClosed || rec.Forced {
				t.Fatalf("Load after an old release's update = %+v, %v; want closed, not forced", rec, err)
			}

			for _, bad := range []string{"7 0 0 0", "7 0 0 2", "7 1", "7 0 01 1", "x 0 0 1", "7 0 33 0"} {
				if _, err := db.ExecContext(ctx, "UPDATE circuits SET policy_state = $1 WHERE name = 'billing-api'", bad); err != nil {
					t.Fatal(err)
				}
				if _, _, err := s.Load(ctx, "billing-api"); err == nil {
					t.Errorf("policy_state %q read without error", bad)
				}
			}
		})
	}
}
