package e2estack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// EnvDynoxide names the environment variable that points at the Dynoxide
// binary (else `dynoxide` on $PATH).
const EnvDynoxide = "DYNOXIDE"

// ErrNoDynoxide is returned by [StartDynoxide] when no Dynoxide binary is
// found.
var ErrNoDynoxide = errors.New("e2estack: no Dynoxide binary ($" + EnvDynoxide + " or dynoxide on PATH): the DynamoDB Streams API tests need it")

// Dynoxide is a Dynoxide process (in memory) on a loopback port: the
// world with a DynamoDB Streams API.
type Dynoxide struct {
	// URL is its base URL; it serves DynamoDB and DynamoDB Streams.
	URL string

	cmd  *exec.Cmd
	done chan struct{}
}

// StartDynoxide starts Dynoxide on a free loopback port and waits until
// it listens. Stop it with Close.
func StartDynoxide(ctx context.Context, log io.Writer) (*Dynoxide, error) {
	bin := os.Getenv(EnvDynoxide)
	if bin == "" {
		p, err := exec.LookPath("dynoxide")
		if err != nil {
			return nil, ErrNoDynoxide
		}
		bin = p
	}
	if log == nil {
		log = io.Discard
	}
	var err error
	for range 5 { // the port is released before Dynoxide binds it
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		d := &Dynoxide{URL: "http://" + addr, done: make(chan struct{})}
		d.cmd = exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
		d.cmd.Stdout, d.cmd.Stderr = log, log
		d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err = d.cmd.Start(); err != nil {
			return nil, fmt.Errorf("e2estack: start %s: %w", bin, err)
		}
		go func() { _ = d.cmd.Wait(); close(d.done) }()
		if err = waitDial(ctx, addr, 15*time.Second, d.done); err == nil {
			return d, nil
		}
		d.Close()
	}
	return nil, fmt.Errorf("e2estack: Dynoxide did not listen: %w", err)
}

// Close stops the process and waits for it (bounded).
func (d *Dynoxide) Close() {
	select {
	case <-d.done:
		return
	default:
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
	}
}

// waitDial polls addr until it accepts a connection, the process exits,
// or timeout passes.
func waitDial(ctx context.Context, addr string, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, timeout)
		}
		select {
		case <-exited:
			return errors.New("exited before listening")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}
