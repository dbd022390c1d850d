// Command demo runs lambdaidem's main job on this machine, with only Go
// installed: it starts the embedded stack (the example functions' Linux
// bootstraps under the AWS Lambda Runtime Interface Emulator, an in-process
// DynamoDB emulator, an in-process SQS endpoint polled like Lambda's event
// source mapping) and walks through a short, narrated scenario, printing
// what the client got and what is in the tables after each step.
//
//	make demo                # or: cd dev && go run ./demo
//
// If aws-lambda-rie is not installed (on $PATH, in $(go env GOPATH)/bin, or
// named by $AWS_LAMBDA_RIE), the demo installs the pinned version with
// `go install` into the user cache folder first. Linux only: the emulator
// runs Linux executables.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // bounded, whatever happens
	defer cancel()
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
	d := &demo{out: out, work: work}
	err = d.run(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("gave up after 3 minutes: %w", err)
	}
	if err != nil && d.logPath != "" {
		fmt.Fprintf(out, "\nThe functions' log: %s\n", filepath.Join(work, "functions.log"))
	}
	return err
}
