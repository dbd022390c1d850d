// Command demo runs lambdaidem's main job on this machine, with only Go
// installed: it starts the embedded stack (the example functions' Linux
// bootstraps under the AWS Lambda Runtime Interface Emulator, an in-process
// DynamoDB emulator, an in-process SQS endpoint polled like Lambda's event
// source mapping) and walks through a short, narrated scenario, printing
// what the client got and what is in the tables after each step.
//
//	make demo                # or: cd dev && go run ./demo
//
// Two phases, each bounded on its own: the setup (installing the emulator if
// it is missing, downloading modules and building the two functions and the
// lambdaidem command: minutes on a cold machine, seconds once cached) within
// setupLimit, then the scenarios within scenarioLimit. If aws-lambda-rie is
// not installed (on $PATH, in $(go env GOBIN) or $(go env GOPATH)/bin, or
// named by $AWS_LAMBDA_RIE), the demo installs the pinned version with `go
// install` into GOBIN (else GOPATH/bin), where the next run finds it. A step
// that fails, is killed or runs out of time says which and why, and the
// functions' log it names is kept. Linux only: the emulator runs Linux
// executables.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the demo runs the functions' Linux bootstraps under the Lambda Runtime Interface Emulator, which needs Linux (this is %s/%s); use a Linux machine, VM or container", runtime.GOOS, runtime.GOARCH)
	}
	work, err := os.MkdirTemp("", "lambdaidem-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	// The functions' log lives outside the work folder: it is kept after a failure.
	logf, err := os.CreateTemp("", "lambdaidem-demo-*.log")
	if err != nil {
		return err
	}
	d := &demo{out: out, work: work, log: logf}
	d.title("lambdaidem demo: the same request, retried every way AWS retries it")
	b, err := d.prepare(ctx)
	if err == nil {
		err = d.scenarios(ctx, b)
	}
	logf.Close()
	if err != nil {
		fmt.Fprintf(out, "\nThe functions' log (kept): %s\n", logf.Name())
		return err
	}
	return os.Remove(logf.Name())
}
