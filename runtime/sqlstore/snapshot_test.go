package sqlstore

import "testing"

// TestSnapshotAfter checks the reading of pg_current_snapshot's text form:
// a committed transaction is after the snapshot when it is at or above
// xmax, or was in progress (xip).
func TestSnapshotAfter(t *testing.T) {
	sn, ok := parseSnapshot("100:105:100,103")
	if !ok {
		t.Fatal("parseSnapshot refused a snapshot")
	}
	for xid, want := range map[uint64]bool{99: false, 100: true, 101: false, 103: true, 104: false, 105: true, 1 << 40: true} {
		if got := sn.after(xid); got != want {
			t.Errorf("after(%d) = %v, want %v", xid, got, want)
		}
	}
	if sn, ok := parseSnapshot("7:7:"); !ok || sn.after(6) || !sn.after(7) {
		t.Errorf("parseSnapshot(7:7:) = %+v, %v", sn, ok)
	}
	for _, bad := range []string{"", "1:2", "a:b:", "1:x:", "1:2:3,y"} {
		if _, ok := parseSnapshot(bad); ok {
			t.Errorf("parseSnapshot(%q) accepted", bad)
		}
	}
}
