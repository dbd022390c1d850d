package e2estack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RIEModule is the pinned module of the AWS Lambda Runtime Interface
// Emulator; `go install RIEModule` installs the aws-lambda-rie command.
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// EnvRIE names an environment variable that may point at the
// aws-lambda-rie binary.
const EnvRIE = "AWS_LAMBDA_RIE"

// invokePath is the emulator's invoke URL path.
const invokePath = "/2015-03-31/functions/function/invocations"

// taskRoot is where Lambda Managed Instances mode looks for the bootstrap.
const taskRoot = "/var/task"

// ErrExited is returned by [Function.Invoke] once the function's emulator
// has exited (see [Function.Exited]).
var ErrExited = errors.New("e2estack: the execution environment has ended (its emulator exited)")

// ErrRIENotFound is returned by [FindRIE] when no emulator binary is found.
var ErrRIENotFound = errors.New("e2estack: aws-lambda-rie not found; install it with: go install " + RIEModule)

// FindRIE returns the path of the aws-lambda-rie binary: $AWS_LAMBDA_RIE,
// else the first on $PATH, else in $(go env GOBIN) or $(go env GOPATH)/bin.
func FindRIE(ctx context.Context) (string, error) {
	if p := os.Getenv(EnvRIE); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("e2estack: %s=%s is not an executable file", EnvRIE, p)
	}
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p, nil
	}
	for _, v := range []string{"GOBIN", "GOPATH"} {
		out, err := exec.CommandContext(ctx, "go", "env", v).Output()
		if err != nil {
			continue
		}
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			if dir == "" {
				continue
			}
			if v == "GOPATH" {
				dir = filepath.Join(dir, "bin")
			}
			if p := filepath.Join(dir, "aws-lambda-rie"); isExecutable(p) {
				return p, nil
			}
		}
	}
	return "", ErrRIENotFound
}

// InstallRIE installs the pinned emulator into dir with `go install` and
// returns the binary's path. It needs the Go module proxy (or a module
// cache that holds the module).
func InstallRIE(ctx context.Context, dir string) (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("e2estack: the Runtime Interface Emulator runs on Linux only (this is %s)", runtime.GOOS)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+abs, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("e2estack: go install %s: %w\n%s", RIEModule, err, out)
	}
	return filepath.Join(abs, "aws-lambda-rie"), nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// FunctionOptions configure [StartFunction].
type FunctionOptions struct {
	// RIE is the aws-lambda-rie binary. Required.
	RIE string
	// Bootstrap is the function's bootstrap executable. Required.
	Bootstrap string
	// Name is the function's name (AWS_LAMBDA_FUNCTION_NAME). Default
	// "function".
	Name string
	// Timeout is the function timeout the emulator enforces, in whole
	// seconds (AWS_LAMBDA_FUNCTION_TIMEOUT). Default 10s.
	Timeout time.Duration
	// Env is the function's environment, added to a minimal base (PATH,
	// HOME, TMPDIR); the harness's own environment is not passed through.
	Env map[string]string
	// MaxConcurrency > 1 runs the emulator in Lambda Managed Instances mode
	// (AWS_LAMBDA_MAX_CONCURRENCY): one process serves that many invocations
	// at once. That mode ignores the bootstrap argument and looks only in
	// /var/task/bootstrap, so the emulator runs in a private mount namespace
	// (unshare -m) with a folder holding the bootstrap bound on /var/task:
	// it needs root, util-linux's unshare, and an existing /var/task (which
	// StartFunction creates, empty, if missing). See [ManagedInstancesSupported].
	MaxConcurrency int
	// Log receives the emulator's and the function's output. Default:
	// discarded.
	Log io.Writer
	// StartTimeout bounds the wait for the emulator to accept connections.
	// Default 10s.
	StartTimeout time.Duration
}

// Function is one Runtime Interface Emulator instance running a function.
type Function struct {
	name    string
	url     string
	timeout time.Duration
	cmd     *exec.Cmd
	waited  chan struct{}
	client  *http.Client
	taskDir string

	mu       sync.Mutex
	invokeMu sync.Mutex    // classic mode serves one invocation at a time
	slots    chan struct{} // managed mode serves MaxConcurrency at a time
	managed  bool
}

// Invocation is what an invoke returned.
type Invocation struct {
	// Status is the emulator's HTTP status.
	Status int
	// Payload is the function's response, or the emulator's error body.
	Payload []byte
	// TimedOut reports that the emulator cut the function off at its
	// timeout.
	TimedOut bool
	// FunctionError is the errorType of a function error (a handler error,
	// a crash, a timeout), empty on success.
	FunctionError string
	// Duration is how long the invoke took.
	Duration time.Duration
}

// ManagedInstancesSupported reports whether Lambda Managed Instances mode
// can run here, and if not, why.
func ManagedInstancesSupported() (bool, string) {
	if runtime.GOOS != "linux" {
		return false, "Lambda Managed Instances mode needs Linux mount namespaces; this is " + runtime.GOOS
	}
	if os.Geteuid() != 0 {
		return false, "Lambda Managed Instances mode looks for its bootstrap only in /var/task and /opt; binding a folder there in a private mount namespace needs root"
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return false, "Lambda Managed Instances mode needs util-linux's unshare to bind the bootstrap on /var/task"
	}
	return true, ""
}

// StartFunction starts an emulator instance for the function and waits
// until it accepts connections. Close stops it.
func StartFunction(ctx context.Context, o FunctionOptions) (*Function, error) {
	// The emulator binds the two ports itself, after freePorts released
	// them: another process (an outgoing connection takes its local port
	// from the same ephemeral range) may take one in between, and the
	// emulator then exits before listening. Nothing was invoked yet, so
	// start again on fresh ports.
	var err error
	for range portAttempts {
		var f *Function
		var portTaken bool
		f, portTaken, err = startFunction(ctx, o)
		if !portTaken {
			return f, err
		}
	}
	return nil, err
}

// portAttempts bounds how often [StartFunction] picks fresh ports after the
// emulator found one taken.
const portAttempts = 5

// startFunction starts the emulator once; portTaken reports that it exited
// before listening because a port it was given was already in use.
func startFunction(ctx context.Context, o FunctionOptions) (_ *Function, portTaken bool, _ error) {
	if o.RIE == "" || o.Bootstrap == "" {
		return nil, false, errors.New("e2estack: StartFunction needs RIE and Bootstrap")
	}
	if o.Name == "" {
		o.Name = "function"
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	secs := int(o.Timeout.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	// Two loopback ports: the emulator's invoke API and the Runtime API the
	// bootstrap polls (default 127.0.0.1:9001, so instances would collide).
	ports, err := freePorts(2)
	if err != nil {
		return nil, false, err
	}
	rieAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	apiAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))

	env := baseEnv()
	for k, v := range o.Env {
		env[k] = v
	}
	env["AWS_LAMBDA_FUNCTION_NAME"] = o.Name
	env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = strconv.Itoa(secs)
	// What Lambda sets and the emulator does not ("Defined runtime
	// environment variables", Lambda developer guide): standard Lambda
	// says on-demand; Managed Instances (below) lambda-managed-instances.
	// RenewAuto reads it to tell a platform that stops a handler at its
	// deadline from one that does not.
	env["AWS_LAMBDA_INITIALIZATION_TYPE"] = "on-demand"
	env["LOG_LEVEL"] = "warn"

	f := &Function{
		name:    o.Name,
		url:     "http://" + rieAddr + invokePath,
		timeout: time.Duration(secs) * time.Second,
		waited:  make(chan struct{}),
		client:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	}
	args := []string{"--runtime-interface-emulator-address", rieAddr, "--runtime-api-address", apiAddr}
	if o.MaxConcurrency > 1 {
		if ok, why := ManagedInstancesSupported(); !ok {
			return nil, false, errors.New("e2estack: " + why)
		}
		if err := os.MkdirAll(taskRoot, 0o755); err != nil {
			return nil, false, fmt.Errorf("e2estack: create the /var/task mount point: %w", err)
		}
		dir, err := os.MkdirTemp("", "e2e-task-")
		if err != nil {
			return nil, false, err
		}
		f.taskDir = dir
		// The runtime may run as another user: the folder must be readable.
		if err := os.Chmod(dir, 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, false, err
		}
		if err := copyFile(o.Bootstrap, filepath.Join(dir, "bootstrap"), 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, false, err
		}
		env["AWS_LAMBDA_MAX_CONCURRENCY"] = strconv.Itoa(o.MaxConcurrency)
		env["AWS_LAMBDA_INITIALIZATION_TYPE"] = "lambda-managed-instances"
		f.managed = true
		f.slots = make(chan struct{}, o.MaxConcurrency)
		// In a private mount namespace: make every mount private (so the
		// bind never reaches the host), bind the task folder on /var/task,
		// then become the emulator.
		script := `mount --make-rprivate / && mount --bind "$1" ` + taskRoot + ` && shift && exec "$@"`
		f.cmd = exec.Command("unshare", append([]string{"-m", "sh", "-c", script, "sh", dir, o.RIE}, args...)...)
	} else {
		f.cmd = exec.Command(o.RIE, append(args, o.Bootstrap)...)
	}
	f.cmd.Env = flatten(env)
	// The emulator's output also goes to start, to tell a port taken
	// before it listened from any other early exit.
	start := &startLog{}
	out := io.MultiWriter(o.Log, start)
	f.cmd.Stdout = out
	f.cmd.Stderr = out
	f.cmd.Dir = filepath.Dir(o.Bootstrap)
	// Its own process group, so Close stops the emulator and the runtime.
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.cmd.Start(); err != nil {
		f.cleanupDir()
		return nil, false, fmt.Errorf("e2estack: start %s: %w", o.RIE, err)
	}
	go func() {
		_ = f.cmd.Wait()
		close(f.waited)
	}()
	if err := waitListening(ctx, rieAddr, o.StartTimeout, f.waited); err != nil {
		f.Close()
		return nil, start.portTaken(), fmt.Errorf("e2estack: emulator for %s: %w", o.Name, err)
	}
	return f, false, nil
}

// startLog keeps the first lines an emulator prints, to read why it exited.
type startLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// startLogCap bounds what startLog keeps: the emulator says why it could
// not listen in its first lines.
const startLogCap = 16 << 10

func (l *startLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := startLogCap - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// portTaken reports whether the emulator said a port it was to bind was in
// use (Go's net package: "bind: address already in use", EADDRINUSE).
func (l *startLog) portTaken() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Contains(l.buf.Bytes(), []byte(syscall.EADDRINUSE.Error()))
}

// Name returns the function's name.
func (f *Function) Name() string { return f.name }

// Timeout returns the timeout the emulator enforces.
func (f *Function) Timeout() time.Duration { return f.timeout }

// Managed reports whether the instance runs in Lambda Managed Instances
// mode.
func (f *Function) Managed() bool { return f.managed }

// Exited is closed once the emulator's process has exited and its output
// has been written to FunctionOptions.Log: the execution environment has
// ended. The emulator shuts down when the function's runtime process exits
// (a crash, or aws-lambda-go ending the process because the Runtime API
// refused a response); Lambda would then route later invocations to a new
// execution environment, and so must the caller ([StartFunction] again).
// Waiting on Exited, rather than probing with an invocation, is what makes
// that deterministic: an invocation sent between the runtime's failure
// and the emulator's exit is lost with the process (Runtime.Unknown).
func (f *Function) Exited() <-chan struct{} { return f.waited }

// Invoke sends one synchronous invocation (RequestResponse) and returns what
// the emulator answered. An error means the invocation could not be made
// or its answer not read; a function error is an Invocation with
// FunctionError set. A classic-mode instance serves one invocation at a
// time, a managed-mode one MaxConcurrency: further calls queue, as Lambda
// routes them to a busy environment only when it has room.
func (f *Function) Invoke(ctx context.Context, payload []byte) (Invocation, error) {
	select {
	case <-f.waited:
		return Invocation{}, fmt.Errorf("%w: %s", ErrExited, f.name)
	default:
	}
	if !f.managed {
		f.invokeMu.Lock()
		defer f.invokeMu.Unlock()
		return f.invoke(ctx, payload)
	}
	select {
	case f.slots <- struct{}{}:
	case <-ctx.Done():
		return Invocation{}, ctx.Err()
	}
	defer func() { <-f.slots }()
	// Managed mode answers Runtime.Unavailable while its runtimes are still
	// initializing or between invocations; the function never saw the
	// event, so it is safe to send it again (bounded).
	for i := 0; ; i++ {
		inv, err := f.invoke(ctx, payload)
		if err != nil || inv.FunctionError != "Runtime.Unavailable" || i == 100 {
			return inv, err
		}
		sleep(ctx, 10*time.Millisecond)
	}
}

func (f *Function) invoke(ctx context.Context, payload []byte) (Invocation, error) {
	// Bounded: the function's own timeout plus room for a cold start.
	ctx, cancel := context.WithTimeout(ctx, f.timeout+15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(payload))
	if err != nil {
		return Invocation{}, err
	}
	start := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		return Invocation{}, fmt.Errorf("e2estack: invoke %s: %w", f.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return Invocation{}, fmt.Errorf("e2estack: invoke %s: read response: %w", f.name, err)
	}
	inv := Invocation{Status: resp.StatusCode, Payload: body, Duration: time.Since(start)}
	inv.FunctionError, inv.TimedOut = classify(resp.StatusCode, body)
	return inv, nil
}

// classify recognizes the emulator's error answers: classic mode answers a
// timeout with 200 and a plain-text body, a crash with 502 and an error
// document; managed mode answers both with 200 and an error document.
func classify(status int, body []byte) (errorType string, timedOut bool) {
	if bytes.HasPrefix(body, []byte("Task timed out after")) {
		return "Sandbox.Timedout", true
	}
	if t := errorTypeOf(body); t != "" {
		return t, t == "Sandbox.Timedout"
	}
	if status >= 300 {
		return "HTTP" + strconv.Itoa(status), false
	}
	return "", false
}

// Close stops the emulator and the function's processes and waits for them
// (bounded).
func (f *Function) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cmd != nil && f.cmd.Process != nil {
		select {
		case <-f.waited:
		default:
			_ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
			select {
			case <-f.waited:
			case <-time.After(5 * time.Second):
			}
		}
	}
	f.client.CloseIdleConnections()
	f.cleanupDir()
}

func (f *Function) cleanupDir() {
	if f.taskDir != "" {
		os.RemoveAll(f.taskDir)
		f.taskDir = ""
	}
}

// Pool is several instances of one function, as Lambda scales out: each
// invocation goes to an idle instance, waiting for one if all are busy.
type Pool struct {
	fns  []*Function
	idle chan *Function
}

// StartPool starts n classic-mode instances of the function in parallel.
func StartPool(ctx context.Context, n int, o FunctionOptions) (*Pool, error) {
	if n < 1 {
		return nil, errors.New("e2estack: a pool needs at least one instance")
	}
	o.MaxConcurrency = 0
	p := &Pool{idle: make(chan *Function, n)}
	type result struct {
		f   *Function
		err error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			f, err := StartFunction(ctx, o)
			results <- result{f, err}
		}()
	}
	var firstErr error
	for range n {
		r := <-results
		if r.err != nil {
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		p.fns = append(p.fns, r.f)
		p.idle <- r.f
	}
	if firstErr != nil {
		p.Close()
		return nil, firstErr
	}
	return p, nil
}

// Size returns the number of instances.
func (p *Pool) Size() int { return len(p.fns) }

// Invoke runs one invocation on an idle instance.
func (p *Pool) Invoke(ctx context.Context, payload []byte) (Invocation, error) {
	var f *Function
	select {
	case f = <-p.idle:
	case <-ctx.Done():
		return Invocation{}, ctx.Err()
	}
	defer func() { p.idle <- f }()
	return f.Invoke(ctx, payload)
}

// Close stops every instance.
func (p *Pool) Close() {
	var wg sync.WaitGroup
	for _, f := range p.fns {
		wg.Go(f.Close)
	}
	wg.Wait()
}

// Invoker is what runs a function: a [Function] or a [Pool].
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) (Invocation, error)
}

func baseEnv() map[string]string {
	env := map[string]string{}
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

func flatten(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// freePorts reserves n distinct loopback ports by listening on them, then
// releases them for the caller to use.
func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("e2estack: reserve a loopback port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitListening polls addr until it accepts a TCP connection, the process
// exits, or timeout passes.
func waitListening(ctx context.Context, addr string, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, timeout)
		}
		select {
		case <-exited:
			return errors.New("exited before listening (see its log)")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}
