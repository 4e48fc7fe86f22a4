package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// confirm asks question on w when standard input is a terminal, and
// reports whether it answers y or yes. When standard input is not a
// terminal it says to pass -yes and reports false; when the answer is no,
// it says that the named circuit was not cleared, opened or closed (verb:
// "clear", "open", "close").
func confirm(w io.Writer, verb, name, question string) bool {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		fmt.Fprintf(w, "circuitctl %s: standard input is not a terminal: pass -yes to %s circuit %s without confirmation\n", verb, verb, name)
		return false
	}
	fmt.Fprint(w, question)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	done := verb + "ed"
	if strings.HasSuffix(verb, "e") {
		done = verb + "d"
	}
	fmt.Fprintf(w, "circuitctl %s: circuit %s not %s\n", verb, name, done)
	return false
}
