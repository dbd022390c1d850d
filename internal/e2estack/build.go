package e2estack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// BuildOptions configure [Build].
type BuildOptions struct {
	// ModuleRoot is the repository root (the folder holding go.mod).
	// Default: found with `go env GOMOD` from the working directory.
	ModuleRoot string
	// Package is the package to build, relative to ModuleRoot, for example
	// "./examples/api-gateway". Required.
	Package string
	// Out is the output folder; the binary is Out/bootstrap. Required.
	Out string
	// Tags are build tags besides lambda.norpc.
	Tags []string
}

// Build compiles a Lambda bootstrap the way `make build` does
// (CGO_ENABLED=0 GOOS=linux, the host's GOARCH, -tags lambda.norpc,
// -trimpath -ldflags='-s -w') and returns the binary's path.
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
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return "", err
	}
	out, err := filepath.Abs(filepath.Join(o.Out, "bootstrap"))
	if err != nil {
		return "", err
	}
	tags := append([]string{"lambda.norpc"}, o.Tags...)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", strings.Join(tags, ","), "-trimpath", "-ldflags=-s -w", "-o", out, o.Package)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("e2estack: build %s (tags %s): %w\n%s", o.Package, strings.Join(tags, ","), err, msg)
	}
	return out, nil
}

// ModuleRoot returns the folder of the main module's go.mod.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("e2estack: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("e2estack: not inside the lambdaidem module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}

// errorTypeOf returns the errorType of a Lambda error document, or "".
func errorTypeOf(body []byte) string {
	var doc struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &doc) != nil {
		return ""
	}
	if doc.ErrorType == "" && doc.ErrorMessage != "" {
		return "Unhandled"
	}
	return doc.ErrorType
}
