package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{nil, 2, "", "usage: circuitctl command"},
		{[]string{"help"}, 0, "state    print the state of circuits in a store", ""},
		{[]string{"-h"}, 0, "clear    clear a circuit in a store", ""},
		{[]string{"gen"}, 2, "", `circuitctl: unknown command "gen"`},
		{[]string{"state", "-nosuchflag"}, 2, "", "usage: circuitctl state"},
		{[]string{"clear", "-h"}, 0, "", "usage: circuitctl clear"},
		{[]string{"-h"}, 0, "migrate  create or update a database store's tables", ""},
		{[]string{"migrate", "-h"}, 0, "", "usage: circuitctl migrate"},
		{[]string{"migrate", "-store", "file:///tmp", "payments"}, 2, "", "usage: circuitctl migrate"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stdout.String(), tt.wantStdout) || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}
