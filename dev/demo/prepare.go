package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lambdaidem/lambdaidem/dev/e2estack"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// setupLimit bounds the setup: installing the emulator, downloading modules,
// building. A cold machine under load needs minutes (README: "make demo");
// the limit only stops a setup that is stuck.
const setupLimit = 20 * time.Minute

// progressEvery is how often a long setup step says it is still at work.
const progressEvery = 30 * time.Second

// builds are what the scenarios run: the emulator, the two functions'
// bootstraps and the lambdaidem command.
type builds struct{ rie, payments, orders, cli string }

// prepare installs the emulator if it is missing and builds what the
// scenarios run, within setupLimit, saying what it does and, on a cold
// machine, how long that takes.
func (d *demo) prepare(parent context.Context) (builds, error) {
	ctx, cancel := context.WithTimeout(parent, setupLimit)
	defer cancel()
	var b builds
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		return b, err
	}
	d.say(buildState(ctx, root).message())

	b.rie, err = rie.Find(ctx)
	if errors.Is(err, rie.ErrNotFound) {
		dir, derr := installDir(ctx)
		if derr != nil {
			return b, derr
		}
		d.say("The AWS Lambda Runtime Interface Emulator is not installed: installing the pinned version once, into " + dir + " (where the next run finds it):")
		d.say("  go install " + rie.Module)
		err = d.setupStep(parent, ctx, "installing the emulator", func(ctx context.Context) (err error) {
			b.rie, err = rie.Install(ctx, dir)
			return err
		})
	}
	if err != nil {
		return b, err
	}

	d.say("Building the two example functions for linux/" + runtime.GOARCH + " and the lambdaidem command:")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() {
		errs[0] = d.setupStep(parent, ctx, "building payments ("+e2estack.PaymentsPackage+")", func(ctx context.Context) (err error) {
			b.payments, err = e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: e2estack.PaymentsPackage, Out: filepath.Join(d.work, "api-gateway")})
			return err
		})
	})
	wg.Go(func() {
		errs[1] = d.setupStep(parent, ctx, "building orders ("+e2estack.OrdersPackage+")", func(ctx context.Context) (err error) {
			b.orders, err = e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: e2estack.OrdersPackage, Out: filepath.Join(d.work, "sqs")})
			return err
		})
	})
	wg.Go(func() {
		errs[2] = d.setupStep(parent, ctx, "building the lambdaidem command (./cmd/lambdaidem)", func(ctx context.Context) (err error) {
			b.cli, err = buildCommand(ctx, root, d.work)
			return err
		})
	})
	wg.Wait()
	return b, errors.Join(errs...)
}

// setupStep runs one setup step, saying every progressEvery that it is still at
// work, and names it, with how long it ran and why it stopped, if it fails.
func (d *demo) setupStep(parent, ctx context.Context, name string, f func(context.Context) error) error {
	start := time.Now()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				d.say(fmt.Sprintf("  … still %s (%v)", name, time.Since(start).Round(time.Second)))
			}
		}
	}()
	err := f(ctx)
	close(done)
	if err != nil {
		return stepFailed(parent, ctx, fmt.Sprintf("%s, after %v", name, time.Since(start).Round(time.Second)), setupLimit, err)
	}
	d.say(fmt.Sprintf("  %s: done in %v", name, time.Since(start).Round(100*time.Millisecond)))
	return nil
}

// stepFailed names a failed step and why it stopped: interrupted, out of
// time (ctx's limit passed), killed by a signal from outside the demo, or
// its own error. A command killed because ctx ended reports only the
// signal, so the contexts are asked first.
func stepFailed(parent, ctx context.Context, step string, limit time.Duration, err error) error {
	why := ""
	var exit *exec.ExitError
	switch {
	case parent.Err() != nil:
		why = "interrupted"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("stopped: its limit of %v passed", limit)
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			why = fmt.Sprintf("killed by %v from outside the demo (out of memory?)", ws.Signal())
		}
	}
	if why == "" {
		return fmt.Errorf("%s: failed: %w", step, err)
	}
	return fmt.Errorf("%s: %s: %w", step, why, err)
}

// installDir is where `go install` puts commands and rie.Find looks:
// GOBIN, else the first GOPATH entry's bin.
func installDir(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("demo: go env GOBIN GOPATH: %w", err)
	}
	lines := strings.Split(string(out), "\n")
	if gobin := strings.TrimSpace(lines[0]); gobin != "" {
		return gobin, nil
	}
	gopath := filepath.SplitList(strings.TrimSpace(lines[1]))
	if len(gopath) == 0 || gopath[0] == "" {
		return "", errors.New("demo: neither GOBIN nor GOPATH is set (go env)")
	}
	return filepath.Join(gopath[0], "bin"), nil
}

// buildCommand builds cmd/lambdaidem (its own module) into dir.
func buildCommand(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "lambdaidem")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(root, "cmd", "lambdaidem")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("demo: build the lambdaidem command: %w\n%s", err, out)
	}
	return bin, nil
}

// cache is how much of the setup's work the machine has done before.
type cache int

const (
	warm        cache = iota // everything built before: seconds
	coldBuild                // modules downloaded, packages not built (an empty build cache)
	coldModules              // modules to download too: a first run
)

// buildState asks the go command, without downloading anything, whether the
// functions' modules are in the module cache and their packages in the build
// cache (for the flags e2estack.Build uses).
func buildState(ctx context.Context, root string) cache {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-tags", "lambda.norpc", "-trimpath",
		"-f", "{{if .Stale}}stale{{end}}", e2estack.PaymentsPackage, e2estack.OrdersPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY=off", "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	out, err := cmd.Output()
	switch {
	case err != nil:
		return coldModules
	case strings.Count(string(out), "stale") > 20:
		return coldBuild
	default:
		return warm
	}
}

// message says what the setup is about to do and how long that takes here
// (measured on 2 cores under load; README's "make demo" has the figures).
func (c cache) message() string {
	switch c {
	case coldModules:
		return "First run on this machine: downloading modules and building, about 8 min on 2 busy cores (later runs start in seconds)."
	case coldBuild:
		return "First build on this machine (the module cache is warm): compiling the AWS SDK and the functions, about 5 min on 2 busy cores."
	default:
		return "The functions are built already: starting in seconds."
	}
}
