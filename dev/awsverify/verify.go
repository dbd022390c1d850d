package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// The outcomes of a run that are not a check's failure, for errors.Is.
var (
	errDeclined    = errors.New("awsverify: not confirmed: nothing was created")
	errInterrupted = errors.New("awsverify: interrupted")
	errChecks      = errors.New("awsverify: some checks failed (see the report)")
)

// outputs are what a deployment hands the checks: CloudFormation outputs by
// stack id (lambdaidem-payments, lambdaidem-orders, lambdaidem-verify,
// without the run's suffix), then output name.
type outputs map[string]map[string]string

// deployer creates a run's stacks and removes them. The CDK CLI does it on
// AWS ([cdkDeployer]); the in-process endpoint in LOCAL mode
// ([localDeployer]); a stub in tests.
type deployer interface {
	// Deploy creates every stack of p and returns their outputs. On an
	// error, part may exist: Destroy is called all the same.
	Deploy(ctx context.Context, p *plan) (outputs, error)
	// Destroy removes every stack of p, those only partly created
	// included; removing what does not exist is not an error.
	Destroy(ctx context.Context, p *plan) error
}

// runner is one run: the plan, the prompt, the deployment, the checks,
// the report and the teardown.
type runner struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Yes skips the confirmation.
	Yes bool
	// Deployer creates and removes the stacks.
	Deployer deployer
	// Signals, when one arrives, interrupts the run: the checks stop and
	// the teardown runs. Further signals are ignored until it is done.
	Signals <-chan os.Signal
	// NewWorld builds what the checks run against from the deployment's
	// outputs.
	NewWorld func(ctx context.Context, out outputs) (*world, error)
	// TeardownTimeout bounds Destroy. Default 20 minutes.
	TeardownTimeout time.Duration
	// Report is where the report goes; nil writes none.
	Report func(rep *report) (path string, err error)
}

// run prints the plan, asks for confirmation unless Yes, deploys, runs the
// checks, writes the report and ALWAYS tears down once Deploy was called:
// after a check's failure, a failed deployment, a panic in a check, or an
// interrupt. It returns the report (nil if nothing ran) and an error
// joining whatever went wrong.
func (r *runner) run(ctx context.Context, p *plan) (rep *report, err error) {
	r.Stdout = &lockedWriter{w: r.Stdout} // the signal watcher writes too
	p.print(r.Stdout)
	if !r.Yes && !confirm(r.Stdin, r.Stdout) {
		return nil, errDeclined
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watched := make(chan struct{})
	watcherDone := make(chan struct{})
	defer func() {
		// The watcher may be printing about a signal that came during the
		// teardown: it has written its last line before run returns.
		close(watched)
		<-watcherDone
	}()
	go func() {
		defer close(watcherDone)
		select {
		case sig := <-r.Signals:
			fmt.Fprintf(r.Stdout, "\nawsverify: %v: stopping the checks and tearing down (further signals are ignored until it is done)\n", sig)
			cancel(fmt.Errorf("%w by %v", errInterrupted, sig))
			for {
				select {
				case <-r.Signals:
					fmt.Fprintln(r.Stdout, "awsverify: still tearing down; `make aws-clean` removes leftovers if this process is killed")
				case <-watched:
					return
				}
			}
		case <-watched:
		}
	}()

	defer func() {
		if v := recover(); v != nil {
			err = errors.Join(err, fmt.Errorf("awsverify: panic: %v", v))
		}
		timeout := r.TeardownTimeout
		if timeout == 0 {
			timeout = 20 * time.Minute
		}
		tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer tcancel()
		fmt.Fprintf(r.Stdout, "awsverify: tearing down %s\n", strings.Join(p.Stacks, ", "))
		if derr := r.Deployer.Destroy(tctx, p); derr != nil {
			err = errors.Join(err, fmt.Errorf("awsverify: teardown: %w; run `make aws-clean` to remove what is left (tag %s=%s)", derr, TagKey, p.RunID))
			if rep != nil {
				rep.Teardown = "FAILED: " + derr.Error()
			}
		} else {
			fmt.Fprintln(r.Stdout, "awsverify: torn down")
			if rep != nil {
				rep.Teardown = "done"
			}
		}
		if rep != nil && r.Report != nil {
			path, werr := r.Report(rep)
			if werr != nil {
				err = errors.Join(err, werr)
			} else {
				fmt.Fprintf(r.Stdout, "awsverify: report in %s\n", path)
			}
		}
		if cause := context.Cause(ctx); errors.Is(cause, errInterrupted) {
			err = errors.Join(cause, err)
		}
	}()

	start := time.Now()
	out, err := r.Deployer.Deploy(ctx, p)
	rep = newReport(p)
	rep.DeployTime = time.Since(start)
	if err != nil {
		rep.Deploy = "FAILED: " + err.Error()
		return rep, fmt.Errorf("awsverify: deploy: %w", err)
	}
	rep.Deploy = "done"
	w, err := r.NewWorld(ctx, out)
	if err != nil {
		return rep, fmt.Errorf("awsverify: %w", err)
	}
	runChecks(ctx, w, p.Checks, rep, r.Stdout)
	if rep.failed() {
		return rep, errChecks
	}
	return rep, nil
}

// confirm asks for "yes" on in; anything else declines.
func confirm(in io.Reader, out io.Writer) bool {
	fmt.Fprint(out, "Type yes to create these resources and run the checks: ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), "yes")
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
