package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// listedPackage is what go list -json says of a package.
type listedPackage struct {
	ImportPath, Name, Dir string
	GoFiles, CgoFiles     []string
	// Export is the file holding its export data, with -export.
	Export string
	Error  *struct {
		Pos, Err string
	}
	// DepsErrors are the errors of the packages it imports, with -export
	// the reason it has no export data.
	DepsErrors []struct {
		Pos, Err string
	}
}

// list runs go list with flags then the packages named, from the program's
// directory and with its build tags, and decodes the packages it prints.
// The names follow "--": none is taken for a flag.
func (p *Program) list(flags, names []string) ([]listedPackage, error) {
	cmdArgs := []string{"list", "-e"}
	if len(p.tags) > 0 {
		cmdArgs = append(cmdArgs, "-tags="+strings.Join(p.tags, ","))
	}
	cmdArgs = append(append(append(cmdArgs, flags...), "--"), names...)
	cmd := exec.Command("go", cmdArgs...)
	cmd.Dir = p.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("load packages: go %s: %s", strings.Join(cmdArgs[:2], " "), msg)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		var lp listedPackage
		err := dec.Decode(&lp)
		if errors.Is(err, io.EOF) {
			return pkgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("load packages: read go list's output: %w", err)
		}
		pkgs = append(pkgs, lp)
	}
}
