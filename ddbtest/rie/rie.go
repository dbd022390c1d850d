package rie

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Module is the pinned module of the AWS Lambda Runtime Interface
// Emulator; `go install Module` installs the aws-lambda-rie command.
const Module = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// EnvBinary names an environment variable that may point at the
// aws-lambda-rie binary.
const EnvBinary = "AWS_LAMBDA_RIE"

// invokePath is the emulator's invoke URL path.
const invokePath = "/2015-03-31/functions/function/invocations"

// taskRoot is where Lambda Managed Instances mode looks for the bootstrap.
const taskRoot = "/var/task"

// Find returns the path of the aws-lambda-rie binary: $AWS_LAMBDA_RIE,
// else the first on $PATH, else in $(go env GOBIN) or $(go env GOPATH)/bin.
// It returns [ErrNotFound] when there is none.
func Find(ctx context.Context) (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("rie: %s=%s is not an executable file", EnvBinary, p)
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
	return "", ErrNotFound
}

// Install installs the pinned emulator into dir with `go install` and
// returns the binary's path. It needs the Go module proxy (or a module
// cache that holds the module).
func Install(ctx context.Context, dir string) (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("rie: the Runtime Interface Emulator runs on Linux only (this is %s)", runtime.GOOS)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "install", Module)
	cmd.Env = append(os.Environ(), "GOBIN="+abs, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("rie: go install %s: %w\n%s", Module, err, out)
	}
	return filepath.Join(abs, "aws-lambda-rie"), nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Options configure [Start]. The zero value of each field means its
// documented default.
type Options struct {
	// RIE is the aws-lambda-rie binary. Default: [Find].
	RIE string
	// Bootstrap is the function's bootstrap executable (see [Build]).
	// Required.
	Bootstrap string
	// Name is the function's name (AWS_LAMBDA_FUNCTION_NAME). Default
	// "function".
	Name string
	// Timeout is the function timeout the emulator enforces, in whole
	// seconds (AWS_LAMBDA_FUNCTION_TIMEOUT). Default 10s.
	Timeout time.Duration
	// MemoryMB is AWS_LAMBDA_FUNCTION_MEMORY_SIZE. Default 128, Lambda's.
	MemoryMB int
	// Region is AWS_REGION and AWS_DEFAULT_REGION. Default "us-east-1".
	Region string
	// DynamoDBEndpoint, if set, is AWS_ENDPOINT_URL_DYNAMODB: the SDK
	// clients the function builds from its configuration send DynamoDB
	// requests there (for example a ddbtest.Endpoint's URL).
	DynamoDBEndpoint string
	// Env is the function's own environment (its table names, ...). It is
	// applied over the variables Lambda sets (see [Environment]), so it may
	// replace any of them, AWS_LAMBDA_INITIALIZATION_TYPE included. The
	// caller's environment is not passed through.
	Env map[string]string
	// MaxConcurrency > 1 runs the emulator in Lambda Managed Instances mode
	// (AWS_LAMBDA_MAX_CONCURRENCY): one process serves that many invocations
	// at once. That mode ignores the bootstrap argument and looks only in
	// /var/task/bootstrap, so the emulator runs in a private mount namespace
	// (unshare -m) with a folder holding the bootstrap bound on /var/task:
	// it needs root, util-linux's unshare, and an existing /var/task (which
	// Start creates, empty, if missing). See [ManagedInstancesSupported].
	MaxConcurrency int
	// Log receives the emulator's and the function's output. Default:
	// discarded.
	Log io.Writer
	// StartTimeout bounds the wait for the emulator to accept connections.
	// Default 10s.
	StartTimeout time.Duration
}

// Environment returns the environment [Start] gives the function for o,
// without the process basics (PATH, HOME, TMPDIR): the variables Lambda
// sets ("Defined runtime environment variables", Lambda developer guide)
// and the emulator does not, among them AWS_LAMBDA_INITIALIZATION_TYPE
// ("on-demand"; "lambda-managed-instances" with MaxConcurrency > 1),
// credentials (test values), AWS_ENDPOINT_URL_DYNAMODB, and o.Env over
// them. Shared configuration files and the instance metadata service are
// switched off, so nothing from the machine running the tests leaks in.
func Environment(o Options) map[string]string {
	o = o.withDefaults()
	secs := o.timeoutSeconds()
	env := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME":        o.Name,
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     strconv.Itoa(secs),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(o.MemoryMB),
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + o.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME":      "rie/" + o.Name,
		// What Lambda sets and the emulator does not: without it, a
		// library cannot tell standard Lambda (which stops a handler at its
		// deadline) from a container or a local server (which does not).
		"AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
		"AWS_REGION":                     o.Region,
		"AWS_DEFAULT_REGION":             o.Region,
		"AWS_ACCESS_KEY_ID":              "test",
		"AWS_SECRET_ACCESS_KEY":          "test",
		"AWS_SESSION_TOKEN":              "test",
		"AWS_EC2_METADATA_DISABLED":      "true",
		"AWS_CONFIG_FILE":                os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE":    os.DevNull,
		"LAMBDA_TASK_ROOT":               taskRoot,
		"LAMBDA_RUNTIME_DIR":             "/var/runtime",
		"_HANDLER":                       "bootstrap",
		"TZ":                             ":UTC",
		"LANG":                           "en_US.UTF-8",
		// The emulator's own log level.
		"LOG_LEVEL": "warn",
	}
	if o.MaxConcurrency > 1 {
		env["AWS_LAMBDA_MAX_CONCURRENCY"] = strconv.Itoa(o.MaxConcurrency)
		env["AWS_LAMBDA_INITIALIZATION_TYPE"] = "lambda-managed-instances"
	}
	if o.DynamoDBEndpoint != "" {
		env["AWS_ENDPOINT_URL_DYNAMODB"] = o.DynamoDBEndpoint
	}
	for k, v := range o.Env {
		env[k] = v
	}
	return env
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "function"
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MemoryMB <= 0 {
		o.MemoryMB = 128
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// timeoutSeconds is the timeout in whole seconds, at least 1: the emulator
// reads AWS_LAMBDA_FUNCTION_TIMEOUT as an integer.
func (o Options) timeoutSeconds() int {
	return max(1, int(o.Timeout.Round(time.Second)/time.Second))
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

	err *FunctionError
}

// Err returns the function error as a [*FunctionError] (errors.Is with
// [ErrTimeout] for a timeout, [ErrFunction] for any), or nil on success.
func (i Invocation) Err() error {
	if i.err != nil {
		return i.err
	}
	if i.FunctionError != "" {
		return &FunctionError{Type: i.FunctionError, Message: string(i.Payload), Status: i.Status}
	}
	return nil
}

// NewInvocation builds the Invocation of an emulator's (or Lambda's)
// answer, recognizing its error answers.
func NewInvocation(status int, payload []byte, d time.Duration) Invocation {
	inv := Invocation{Status: status, Payload: payload, Duration: d}
	if fe := parseFunctionError(status, payload); fe != nil {
		inv.err = fe
		inv.FunctionError = fe.Type
		inv.TimedOut = fe.TimedOut()
	}
	return inv
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

// Start starts an emulator instance for the function on free loopback
// ports and waits until it accepts connections. Close stops it.
//
// Every emulator claims 127.0.0.1:9001 for the Runtime API its bootstrap
// polls unless told otherwise: Start gives each instance its own
// (--runtime-api-address) besides its own invoke address
// (--runtime-interface-emulator-address), so instances run side by side.
func Start(ctx context.Context, o Options) (*Function, error) {
	if o.RIE == "" {
		p, err := Find(ctx)
		if err != nil {
			return nil, err
		}
		o.RIE = p
	}
	// The emulator binds the two ports itself, after freePorts released
	// them: another process may take one in between, and the emulator then
	// exits before listening. Nothing was invoked yet, so start again on
	// fresh ports.
	var err error
	for range portAttempts {
		var f *Function
		var portTaken bool
		f, portTaken, err = start(ctx, o)
		if !portTaken {
			return f, err
		}
	}
	return nil, err
}

// portAttempts bounds how often [Start] picks fresh ports after the
// emulator found one taken.
const portAttempts = 5

// start starts the emulator once; portTaken reports that it exited before
// listening because a port it was given was already in use.
func start(ctx context.Context, o Options) (_ *Function, portTaken bool, _ error) {
	if o.Bootstrap == "" {
		return nil, false, errors.New("rie: Start needs a Bootstrap")
	}
	o = o.withDefaults()
	ports, err := freePorts(2)
	if err != nil {
		return nil, false, err
	}
	rieAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	apiAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))

	env := baseEnv()
	for k, v := range Environment(o) {
		env[k] = v
	}
	f := &Function{
		name:    o.Name,
		url:     "http://" + rieAddr + invokePath,
		timeout: time.Duration(o.timeoutSeconds()) * time.Second,
		waited:  make(chan struct{}),
		client:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	}
	args := []string{"--runtime-interface-emulator-address", rieAddr, "--runtime-api-address", apiAddr}
	if o.MaxConcurrency > 1 {
		if ok, why := ManagedInstancesSupported(); !ok {
			return nil, false, errors.New("rie: " + why)
		}
		if err := os.MkdirAll(taskRoot, 0o755); err != nil {
			return nil, false, fmt.Errorf("rie: create the /var/task mount point: %w", err)
		}
		dir, err := os.MkdirTemp("", "rie-task-")
		if err != nil {
			return nil, false, err
		}
		f.taskDir = dir
		// The runtime may run as another user: the folder must be readable.
		if err := os.Chmod(dir, 0o755); err != nil {
			f.cleanupDir()
			return nil, false, err
		}
		if err := copyFile(o.Bootstrap, filepath.Join(dir, "bootstrap"), 0o755); err != nil {
			f.cleanupDir()
			return nil, false, err
		}
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
		return nil, false, fmt.Errorf("rie: start %s: %w", o.RIE, err)
	}
	go func() {
		_ = f.cmd.Wait()
		close(f.waited)
	}()
	if err := waitListening(ctx, rieAddr, o.StartTimeout, f.waited); err != nil {
		f.Close()
		return nil, start.portTaken(), fmt.Errorf("rie: emulator for %s: %w", o.Name, err)
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
// has been written to Options.Log: the execution environment has ended.
// The emulator shuts down when the function's runtime process exits (a
// crash, or aws-lambda-go ending the process because the Runtime API
// refused a response); Lambda would then route later invocations to a new
// execution environment, and so must the caller ([Start] again). Waiting
// on Exited, rather than probing with an invocation, is what makes that
// deterministic: an invocation sent between the runtime's failure and the
// emulator's exit is lost with the process (Runtime.Unknown).
func (f *Function) Exited() <-chan struct{} { return f.waited }

// Invoke sends one synchronous invocation (RequestResponse) and returns what
// the emulator answered. An error means the invocation could not be made
// or its answer not read; a function error is an Invocation whose Err is
// a [*FunctionError]. A classic-mode instance serves one invocation at a
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
	if t := tenantOf(ctx); t != "" {
		req.Header.Set(TenantHeader, t)
	}
	start := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		return Invocation{}, invokeError(f.name, "send", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return Invocation{}, invokeError(f.name, "read response", err)
	}
	return NewInvocation(resp.StatusCode, body, time.Since(start)), nil
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

// StartPool starts n classic-mode instances of the function in parallel,
// each on its own ports.
func StartPool(ctx context.Context, n int, o Options) (*Pool, error) {
	if n < 1 {
		return nil, errors.New("rie: a pool needs at least one instance")
	}
	if o.RIE == "" {
		p, err := Find(ctx)
		if err != nil {
			return nil, err
		}
		o.RIE = p
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
			f, err := Start(ctx, o)
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

// Functions returns the instances.
func (p *Pool) Functions() []*Function { return append([]*Function(nil), p.fns...) }

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
	slices.Sort(out)
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
			return nil, fmt.Errorf("rie: reserve a loopback port: %w", err)
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

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}
