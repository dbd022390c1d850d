package rie

import (
	"context"
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
	// Dir is the folder `go build` runs in: inside the module that holds
	// Package. Default: the current folder.
	Dir string
	// Package is the main package to build, as `go build` takes it
	// ("./cmd/charge", "."). Required.
	Package string
	// Out is the output folder; the binary is Out/bootstrap. Required.
	Out string
	// Tags are build tags besides lambda.norpc.
	Tags []string
}

// Build compiles a Lambda bootstrap as one is built for the provided.al2023
// runtime (CGO_ENABLED=0 GOOS=linux, the host's GOARCH, so the emulator
// runs it here; -tags lambda.norpc, -trimpath -ldflags='-s -w') and
// returns the binary's path.
func Build(ctx context.Context, o BuildOptions) (string, error) {
	if o.Package == "" || o.Out == "" {
		return "", errors.New("rie: Build needs Package and Out")
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
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("rie: build %s (tags %s): %w\n%s", o.Package, strings.Join(tags, ","), err, msg)
	}
	return out, nil
}
