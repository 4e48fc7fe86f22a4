package notify

import (
	"errors"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	var l List
	l.Send(errors.New("to nobody")) // an empty list is ready
	var got []string
	for _, name := range []string{"a", "b"} {
		l.Add(func(err error) { got = append(got, name+": "+err.Error()) })
	}
	l.Send(errors.New("lost"))
	if want := "a: lost,b: lost"; len(got) != 2 || got[0]+","+got[1] != want {
		t.Fatalf("Send reached %q, want %s", got, want)
	}
}

func TestSendChange(t *testing.T) {
	var l List
	var got []string
	l.SendChange(errors.New("a")) // to nobody: the first that is heard is sent
	l.Add(func(err error) { got = append(got, err.Error()) })
	for _, msg := range []string{"a", "a", "b", "b", "a", "", "a"} {
		var err error // "": the session went live
		if msg != "" {
			err = errors.New(msg)
		}
		l.SendChange(err)
	}
	if want := "a,b,a,a"; strings.Join(got, ",") != want {
		t.Fatalf("SendChange sent %q, want %s: each change once, and again after a live session", got, want)
	}
}
