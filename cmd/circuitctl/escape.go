package main

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable returns s with every byte a terminal could act on shown as an
// escape instead: control characters (C0, DEL, C1: \x1b, \n, \u009b),
// format characters such as bidirectional overrides (\u202e), and invalid
// UTF-8 (\xff). Every string from a store (names, errors) goes through it
// before reaching a terminal: a row any application can plant must not
// retitle the window, clear the screen or forge a line of the table.
func printable(s string) string {
	i := strings.IndexFunc(s, unsafeRune)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// unsafeRune reports whether r is a control or format character.
func unsafeRune(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// jsonSafe escapes in JSON text the characters encoding/json leaves raw
// that a terminal could act on (DEL and C1, format characters): they occur
// only inside strings, where \uXXXX means the same.
func jsonSafe(js []byte) []byte {
	if !bytes.ContainsFunc(js, unsafeRune) {
		return js
	}
	var b bytes.Buffer
	for len(js) > 0 {
		r, size := utf8.DecodeRune(js)
		if unsafeRune(r) && r != '\n' {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.Write(js[:size])
		}
		js = js[size:]
	}
	return b.Bytes()
}
