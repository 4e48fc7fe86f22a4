package sqlstore

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// The record fields successes, reopens and forced (CloseAfter, MaxCooldown,
// holds) live in one nullable column, policy_state, added by Migrate to
// tables of earlier releases:
//
//	<version> <successes> <reopens> <forced: 0 or 1>
//
// NULL when all three are zero, so a row written by this release without
// them is the row an earlier release would write. The row version it was
// written with comes first: an earlier release, which does not know the
// column, leaves it as it was when it updates the row, and a policy_state
// whose version is not the row's is such a leftover and reads as NULL.

// encodePolicyState returns r's policy_state column: nil or the text.
func encodePolicyState(r *driver.Record) any {
	if r.Successes == 0 && r.Reopens == 0 && !r.Forced {
		return nil
	}
	forced := "0"
	if r.Forced {
		forced = "1"
	}
	return fmt.Sprintf("%d %d %d %s", r.Version, r.Successes, r.Reopens, forced)
}

// decodePolicyState sets r's successes, reopens and forced from the
// policy_state column; r's Version is already set.
func decodePolicyState(c sql.NullString, r *driver.Record) error {
	if !c.Valid {
		return nil
	}
	f := strings.Split(c.String, " ")
	if len(f) != 4 || f[3] != "0" && f[3] != "1" {
		return fmt.Errorf("policy_state %q is not <version> <successes> <reopens> <0|1>", c.String)
	}
	var n [3]uint64
	for i := range n {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil || strconv.FormatUint(v, 10) != f[i] {
			return fmt.Errorf("policy_state %q: %q is not a canonical number", c.String, f[i])
		}
		n[i] = v
	}
	if n[0] != r.Version {
		return nil // left by a release that does not know the column
	}
	r.Successes, r.Reopens, r.Forced = int(min(n[1], 1<<31)), int(min(n[2], 1<<31)), f[3] == "1"
	if r.Successes == 0 && r.Reopens == 0 && !r.Forced {
		return fmt.Errorf("policy_state %q with nothing set: should be NULL", c.String)
	}
	return nil
}

// duplicateColumn reports whether err is SQLite's refusal to add a column
// that exists.
func duplicateColumn(err error) bool {
	return strings.Contains(err.Error(), "duplicate column name")
}
