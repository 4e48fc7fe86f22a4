package generator

import "testing"

func TestDiff(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"insert", "a\nc\n", "a\nb\nc\n", "--- x\n+++ y\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"},
		{"delete", "a\nb\nc\n", "a\nc\n", "--- x\n+++ y\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"},
		{"from nothing", "", "a\n", "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n"},
		{"far apart", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "0\n2\n3\n4\n5\n6\n7\n8\n9\n11\n",
			"--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+0\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+11\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := diff("x", "y", []byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Errorf("Diff:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
