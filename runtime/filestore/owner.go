package filestore

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
)

// checkOwner refuses a state directory, record, lock or index that is not
// owned by the user this process runs as, as ssh's StrictModes refuses a
// key file: another user who owns it can change the state every process of
// this one trusts (hold circuits open, or closed).
func checkOwner(what, path string, fi fs.FileInfo) error {
	euid := os.Geteuid()
	id := identify(fi)
	if euid < 0 || id.uid < 0 || id.uid == euid {
		return nil
	}
	return fmt.Errorf("%s %s is owned by %s, but this process runs as %s: refused, since its owner can change every circuit's state; "+
		"chown it (and the state directory's files) to uid %d, or use a state directory of this user's own",
		what, path, userName(id.uid), userName(euid), euid)
}

// userName names the user uid, as "uid 0 (root)".
func userName(uid int) string {
	s := "uid " + strconv.Itoa(uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		s += " (" + u.Username + ")"
	}
	return s
}
