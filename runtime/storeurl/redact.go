package storeurl

import (
	"errors"
	"net/url"
	"slices"
	"strings"
)

// hidden is shown in place of a password.
const hidden = "xxxxx"

// isSecret reports whether a query parameter holds a password: password,
// sslpassword and the like, in any case.
func isSecret(key string) bool { return strings.Contains(strings.ToLower(key), "password") }

// redact returns u as text with every password, in the userinfo and in
// the query, shown as xxxxx. The query keeps its order.
func redact(u *url.URL) string {
	v := *u
	if v.Scheme == "" && strings.Contains(v.Path, "=") { // a key=value DSN: its password= may hold one
		return "(a key=value string, not a URL)"
	}
	if _, ok := v.User.Password(); ok {
		v.User = url.UserPassword(v.User.Username(), hidden)
	}
	if v.RawQuery != "" {
		pairs := strings.Split(v.RawQuery, "&")
		for i, p := range pairs {
			if k, _, _ := strings.Cut(p, "="); secretKey(k) {
				pairs[i] = k + "=" + hidden
			}
		}
		v.RawQuery = strings.Join(pairs, "&")
	}
	return v.String()
}

// secretKey reports whether a raw (escaped) query key names a password.
func secretKey(raw string) bool {
	k, err := url.QueryUnescape(raw)
	return isSecret(raw) || err == nil && isSecret(k)
}

// passwords returns every spelling of the passwords u carries (decoded and
// escaped as in raw), longest first.
func passwords(u *url.URL, raw string) []string {
	var vals []string
	if p, ok := u.User.Password(); ok {
		vals = append(vals, p, rawPassword(raw))
	}
	for _, p := range strings.Split(u.RawQuery, "&") {
		if k, v, _ := strings.Cut(p, "="); secretKey(k) {
			vals = append(vals, v)
			if d, err := url.QueryUnescape(v); err == nil {
				vals = append(vals, d)
			}
		}
	}
	var forms []string
	for _, v := range vals {
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v))
	}
	forms = slices.DeleteFunc(forms, func(s string) bool { return s == "" })
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(forms)
}

// authority splits raw after its scheme's :// into the authority, up to
// the first /, ? or #, and the rest.
func authority(raw string) (auth, rest string) {
	_, after, _ := strings.Cut(raw, "://")
	if i := strings.IndexAny(after, "/?#"); i >= 0 {
		return after[:i], after[i:]
	}
	return after, ""
}

// rawPassword returns the password of raw's userinfo as written: from
// the userinfo's first colon to the authority's last @; or "".
func rawPassword(raw string) string {
	auth, _ := authority(raw)
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(auth[:at], ":")
	return pw
}

// scrub returns err unchanged, or when its text shows one of secrets, an
// error with that text, each secret shown as xxxxx, that matches what err
// matches with errors.Is but does not unwrap to it.
func scrub(err error, secrets []string) error {
	msg := err.Error()
	clean := msg
	for _, s := range secrets {
		if s != "" {
			clean = strings.ReplaceAll(clean, s, hidden)
		}
	}
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// redactedError is an error whose text had a password, hidden.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is reports whether the original error matches target, so that
// errors.Is(err, context.DeadlineExceeded) still works.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }
