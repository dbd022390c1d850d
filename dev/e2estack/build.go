package e2estack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// BuildOptions configure [Build].
type BuildOptions struct {
	// ModuleRoot is the repository root (the folder holding the library
	// module's go.mod). Default: found by [ModuleRoot].
	ModuleRoot string
	// Package is the package to build, relative to ModuleRoot, for example
	// "./examples/api-gateway"; it is built in the (nested) module that
	// holds it. Required.
	Package string
	// Out is the output folder; the binary is Out/bootstrap. Required.
	Out string
	// Tags are build tags besides lambda.norpc.
	Tags []string
}

// Build compiles a package of this repository as a Lambda bootstrap, the
// way `make build` does (see rie.Build), in the nested module that holds
// it, and returns the binary's path.
func Build(ctx context.Context, o BuildOptions) (string, error) {
	if o.Package == "" || o.Out == "" {
		return "", errors.New("e2estack: Build needs Package and Out")
	}
	root := o.ModuleRoot
	if root == "" {
		var err error
		if root, err = ModuleRoot(ctx); err != nil {
			return "", err
		}
	}
	dir, pkg, err := moduleOf(root, o.Package)
	if err != nil {
		return "", err
	}
	return rie.Build(ctx, rie.BuildOptions{Dir: dir, Package: pkg, Out: o.Out, Tags: o.Tags})
}

// libraryModule is the module path of the repository root's go.mod.
const libraryModule = "github.com/lambdaidem/lambdaidem"

// ModuleRoot returns the repository root: the folder of the library
// module's go.mod, found upward from the main module's (`go env GOMOD`), so
// that it works from the repository's nested modules too.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("e2estack: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("e2estack: not inside a lambdaidem module (go env GOMOD is empty)")
	}
	for dir := filepath.Dir(mod); ; {
		if modulePath(filepath.Join(dir, "go.mod")) == libraryModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("e2estack: no go.mod of %s above %s", libraryModule, mod)
		}
		dir = parent
	}
}

// moduleOf returns the folder of the module holding pkg (relative to root)
// and pkg relative to that folder.
func moduleOf(root, pkg string) (dir, rel string, err error) {
	abs := filepath.Join(root, pkg)
	for dir = abs; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if dir == filepath.Dir(dir) {
			return "", "", fmt.Errorf("e2estack: no go.mod above %s", abs)
		}
	}
	if rel, err = filepath.Rel(dir, abs); err != nil {
		return "", "", err
	}
	return dir, "./" + filepath.ToSlash(rel), nil
}

// modulePath returns the module path a go.mod declares, or "".
func modulePath(gomod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
