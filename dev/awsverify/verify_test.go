package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// stubDeployer records its calls and fails on demand: the boundary of the
// CDK CLI, which cannot reach AWS here.
type stubDeployer struct {
	mu          sync.Mutex
	calls       []string
	deployErr   error
	destroyErr  error
	deployBlock bool // Deploy waits for its context to end
}

func (d *stubDeployer) Deploy(ctx context.Context, p *plan) (outputs, error) {
	d.record("deploy " + p.RunID)
	if d.deployBlock {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	return outputs{}, d.deployErr
}

func (d *stubDeployer) Destroy(ctx context.Context, p *plan) error {
	d.record("destroy " + p.RunID)
	if ctx.Err() != nil {
		return errors.New("Destroy got a cancelled context")
	}
	return d.destroyErr
}

func (d *stubDeployer) record(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, s)
}

func (d *stubDeployer) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// fakeCheck is a check whose Run the test supplies.
func fakeCheck(name string, run func(ctx context.Context) error) *check {
	return &check{Name: name, Bound: "a test check", Budget: budget{WriteUnits: 1000, Time: time.Minute},
		Run: func(ctx context.Context, _ *world, s *section) error { s.printf("ran %s", name); return run(ctx) }}
}

func testRunner(d deployer, stdin string, yes bool) (*runner, *bytes.Buffer) {
	var out bytes.Buffer
	return &runner{Stdin: strings.NewReader(stdin), Stdout: &out, Yes: yes, Deployer: d,
		NewWorld: func(context.Context, outputs) (*world, error) { return &world{}, nil }}, &out
}

func testPlan(checks ...*check) *plan {
	return &plan{RunID: "vtest0001", Region: "eu-west-1", Account: "AKIA…TEST", Stacks: stackNames("vtest0001"), Tables: tableRoles, Checks: checks}
}

func TestThePromptShowsWhatCostAndTimeBeforeAnythingIsCreated(t *testing.T) {
	for _, c := range []struct {
		name, stdin string
		yes         bool
		wantDeploy  bool
	}{
		{"declined", "no\n", false, false},
		{"no answer", "", false, false},
		{"confirmed", "yes\n", false, true},
		{"-yes", "", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &stubDeployer{}
			r, out := testRunner(d, c.stdin, c.yes)
			_, err := r.run(t.Context(), testPlan(fakeCheck("one", func(context.Context) error { return nil })))
			for _, want := range []string{"lambdaidem-payments-vtest0001", "lambdaidem-orders-vtest0001", "lambdaidem-verify-vtest0001",
				TagKey + "=vtest0001", "eu-west-1", "Estimated cost: at most $", "Estimated time: deploy up to"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the plan does not say %q:\n%s", want, out)
				}
			}
			if prompted := strings.Contains(out.String(), "Type yes"); prompted == c.yes {
				t.Errorf("prompted = %v with yes = %v", prompted, c.yes)
			}
			calls := d.Calls()
			if !c.wantDeploy {
				if !errors.Is(err, errDeclined) || len(calls) != 0 {
					t.Fatalf("run = %v, calls %v; want declined with nothing created", err, calls)
				}
				return
			}
			if err != nil || len(calls) != 2 || calls[0] != "deploy vtest0001" || calls[1] != "destroy vtest0001" {
				t.Fatalf("run = %v, calls %v; want deploy then destroy", err, calls)
			}
			if i, j := strings.Index(out.String(), "Estimated cost"), strings.Index(out.String(), "tearing down"); i < 0 || j < i {
				t.Fatalf("the estimate must come before anything happens:\n%s", out)
			}
		})
	}
}

func TestTeardownAlwaysRuns(t *testing.T) {
	boom := errors.New("boom")
	ok := fakeCheck("ok", func(context.Context) error { return nil })
	for _, c := range []struct {
		name    string
		d       *stubDeployer
		checks  []*check
		wantErr string
	}{
		{"after a failed deployment", &stubDeployer{deployErr: boom}, []*check{ok}, "deploy: boom"},
		{"after a failed check", &stubDeployer{}, []*check{fakeCheck("bad", func(context.Context) error { return boom }), ok}, "some checks failed"},
		{"after a check's panic", &stubDeployer{}, []*check{fakeCheck("panics", func(context.Context) error { panic("oops") })}, "some checks failed"},
		{"and says how to clean up when it fails", &stubDeployer{destroyErr: boom}, []*check{ok}, "make aws-clean"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := testRunner(c.d, "", true)
			var written *report
			r.Report = func(rep *report) (string, error) { written = rep; return "report.md", nil }
			_, err := r.run(t.Context(), testPlan(c.checks...))
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("run = %v; want an error containing %q", err, c.wantErr)
			}
			if calls := c.d.Calls(); len(calls) != 2 || calls[1] != "destroy vtest0001" {
				t.Fatalf("calls %v; want deploy then destroy", calls)
			}
			if written == nil {
				t.Fatal("no report written")
			}
			if c.d.destroyErr != nil && !strings.HasPrefix(written.Teardown, "FAILED") {
				t.Fatalf("report teardown %q; want FAILED", written.Teardown)
			}
		})
	}
}

func TestAnInterruptStopsTheChecksAndTearsDown(t *testing.T) {
	for _, during := range []string{"deploy", "check"} {
		t.Run("during the "+during, func(t *testing.T) {
			d := &stubDeployer{deployBlock: during == "deploy"}
			sigs := make(chan os.Signal, 2)
			started := make(chan struct{})
			blocking := fakeCheck("blocks", func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				return context.Cause(ctx)
			})
			never := fakeCheck("never", func(context.Context) error { t.Error("a check ran after the interrupt"); return nil })
			r, out := testRunner(d, "", true)
			r.Signals = sigs
			var written *report
			r.Report = func(rep *report) (string, error) { written = rep; return "report.md", nil }
			go func() {
				if during == "check" {
					<-started
				} else {
					for len(d.Calls()) == 0 {
						time.Sleep(time.Millisecond)
					}
				}
				sigs <- syscall.SIGINT
				sigs <- syscall.SIGINT // a second one is ignored
			}()
			// Without the interrupt, the blocked deployment or check would
			// end only here: a failure, not a hang.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			_, err := r.run(ctx, testPlan(blocking, never))
			if !errors.Is(err, errInterrupted) {
				t.Fatalf("run = %v; want interrupted", err)
			}
			if calls := d.Calls(); len(calls) != 2 || calls[1] != "destroy vtest0001" {
				t.Fatalf("calls %v; want deploy then destroy", calls)
			}
			if !strings.Contains(out.String(), "tearing down") {
				t.Fatalf("output:\n%s", out)
			}
			if during == "check" && (written == nil || written.Sections[0].Status != "interrupted" || written.Sections[1].Status != "interrupted") {
				t.Fatalf("report sections: %+v", written.Sections)
			}
		})
	}
}

func TestPreflightRefuses(t *testing.T) {
	static := func(region, key string) func(context.Context) (aws.Config, error) {
		return func(context.Context) (aws.Config, error) {
			return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, "secret", "")}, nil
		}
	}
	for _, c := range []struct {
		name    string
		o       preflightOptions
		wantErr error
	}{
		{"without a Region", preflightOptions{LoadConfig: static("", "AKIAEXAMPLE0001")}, errNoRegion},
		{"without credentials", preflightOptions{LoadConfig: func(context.Context) (aws.Config, error) { return aws.Config{Region: "eu-west-1"}, nil }}, errNoCredentials},
		{"with empty credentials", preflightOptions{LoadConfig: static("eu-west-1", "")}, errNoCredentials},
		{"when the configuration cannot load", preflightOptions{LoadConfig: func(context.Context) (aws.Config, error) { return aws.Config{}, errors.New("bad profile") }}, errNoCredentials},
		{"with AWS_ENDPOINT_URL set", preflightOptions{Environ: []string{"AWS_ENDPOINT_URL=http://localhost:4566"}, LoadConfig: static("eu-west-1", "AKIAEXAMPLE0001")}, errEndpointSet},
		{"with AWS_ENDPOINT_URL_DYNAMODB set", preflightOptions{Environ: []string{"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000"}, LoadConfig: static("eu-west-1", "AKIAEXAMPLE0001")}, errEndpointSet},
		{"accepts credentials and a Region", preflightOptions{Environ: []string{"AWS_ENDPOINT_URL_DYNAMODB="}, LoadConfig: static("eu-west-1", "AKIAEXAMPLE0001")}, nil},
		{"accepts an endpoint when asked to test it", preflightOptions{EndpointOK: true, Environ: []string{"AWS_ENDPOINT_URL=http://localhost:4566"}, LoadConfig: static("eu-west-1", "AKIAEXAMPLE0001")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tgt, err := preflight(t.Context(), c.o)
			if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Fatalf("preflight = %v; want %v", err, c.wantErr)
			}
			if err == nil && (tgt.AccessKey != "AKIA…0001" || tgt.Config.Region != "eu-west-1") {
				t.Fatalf("target = %+v", tgt)
			}
		})
	}
}

// isolateAWS leaves the SDK nothing to find: no variables, no files, no
// instance metadata.
func isolateAWS(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("AWS_CONFIG_FILE", dir+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func TestTheCommandRefusesWithoutCredentials(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_REGION", "eu-west-1")
	if _, err := preflight(t.Context(), preflightOptions{LoadConfig: func(ctx context.Context) (aws.Config, error) { return config.LoadDefaultConfig(ctx) }}); !errors.Is(err, errNoCredentials) {
		t.Fatalf("preflight with the SDK's own resolution = %v; want %v", err, errNoCredentials)
	}
	t.Chdir("..")
	var stdout, stderr bytes.Buffer
	code := cli(t.Context(), []string{"-yes"}, strings.NewReader(""), &stdout, &stderr, nil)
	if code != 2 || !strings.Contains(stderr.String(), "no AWS credentials") || strings.Contains(stdout.String(), "npx") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s\nwant exit 2, a refusal, and no CDK CLI run", code, &stdout, &stderr)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE0001")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_ENDPOINT_URL", "http://localhost:4566")
	stdout.Reset()
	stderr.Reset()
	if code := cli(t.Context(), []string{"-yes"}, strings.NewReader(""), &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), "AWS_ENDPOINT_URL=http://localhost:4566") {
		t.Fatalf("with AWS_ENDPOINT_URL: exit %d\nstderr: %s", code, &stderr)
	}
}

func TestReadOutputsKeysByStackID(t *testing.T) {
	out, err := readOutputs([]byte(`{"lambdaidem-payments-v1":{"ApiUrl":"https://x.execute-api.eu-west-1.amazonaws.com/"},"lambdaidem-verify-v1":{"ChaosTable":"t"}}`), "v1")
	if err != nil || out[stackPayments]["ApiUrl"] == "" || out[stackVerify]["ChaosTable"] != "t" {
		t.Fatalf("readOutputs = %v, %v", out, err)
	}
}

// The estimate is the checks' budgets priced, not a fixed figure.
func TestThePlanPricesTheChecksBudgets(t *testing.T) {
	small := testPlan(&check{Name: "a", Budget: budget{WriteUnits: 1e6, Time: time.Minute}})
	big := testPlan(&check{Name: "a", Budget: budget{WriteUnits: 1e6, ReadUnits: 8e6, Invocations: 1e6, HTTPRequests: 1e6, Time: time.Minute}},
		&check{Name: "b", Budget: budget{SQSRequests: 1e6, LogMB: 1024, Time: 2 * time.Minute}})
	if got := small.total().dollars(); got != pricePerMWriteUnits {
		t.Fatalf("a million write units: $%v; want $%v", got, pricePerMWriteUnits)
	}
	want := pricePerMWriteUnits + 8*pricePerMReadUnits + pricePerMInvokes + 1e6*0.125*pricePerGBSecond + pricePerMHTTPAPI + pricePerMSQS + pricePerGBLogs
	if got := big.total().dollars(); got < want-1e-9 || got > want+1e-9 {
		t.Fatalf("dollars = %v; want %v", got, want)
	}
	var out bytes.Buffer
	big.print(&out)
	for _, s := range []string{"Estimated cost: at most $5.39", "1000000 write and 8000000 read request units", "checks up to 3m0s"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the plan does not say %q:\n%s", s, &out)
		}
	}
}

func TestGoTestVerdictsKeepTheTestsLogs(t *testing.T) {
	out := `{"Action":"output","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Test":"TestA","Output":"    a_test.go:12: 20 contenders: 1 created | 19 replayed\n"}
{"Action":"pass","Test":"TestA"}
{"Action":"output","Test":"TestB","Output":"    b_test.go:3: needs faults\n"}
{"Action":"skip","Test":"TestB"}
{"Action":"output","Test":"TestC","Output":"    c_test.go:9: want 1, got 2\n"}
{"Action":"fail","Test":"TestC"}
not json
`
	v := parseTestJSON([]byte(out))
	sec := &section{}
	err := v.write(sec)
	if err == nil || !strings.Contains(err.Error(), "1 failed: TestC") {
		t.Fatalf("write = %v; want TestC's failure", err)
	}
	md := strings.Join(sec.Lines, "\n")
	for _, want := range []string{"1 passed, 1 failed, 1 skipped.", "| TestA | passed: 20 contenders: 1 created \\| 19 replayed |",
		"| TestB | skipped: b_test.go:3: needs faults |", "| TestC | **FAILED** |", "want 1, got 2"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if err := parseTestJSON(nil).write(&section{}); err == nil {
		t.Fatal("no test at all must fail the check")
	}
}

func TestComparisonListsDifferencesAndFailsOnlyLocally(t *testing.T) {
	got := []observation{{Name: "a", Result: "x"}, {Name: "b", Result: "y"}, {Name: "c", Result: "timing", Volatile: true}}
	want := []observation{{Name: "a", Result: "x"}, {Name: "b", Result: "z"}, {Name: "c", Result: "other"}}
	aws := &section{}
	if err := compareObservations(aws, got, want, false); err != nil {
		t.Fatalf("on AWS a difference is a ddbtest bug, listed, not a failure: %v", err)
	}
	md := strings.Join(aws.Lines, "\n")
	for _, s := range []string{"| b | y | z | **differs** |", "| c | timing | other | differs (timing-dependent) |", "- b"} {
		if !strings.Contains(md, s) {
			t.Errorf("the section lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "- c") || strings.Contains(md, "- a") {
		t.Errorf("only b differs for good:\n%s", md)
	}
	if err := compareObservations(&section{}, got, want, true); err == nil || !strings.Contains(err.Error(), "1 probes: b") {
		t.Fatalf("locally, target and reference are the same endpoint: a difference is a failure; got %v", err)
	}
}

// Asked to test another endpoint, the plan and the report say it is not AWS.
func TestAnEndpointRunSaysItIsNotAWS(t *testing.T) {
	p := testPlan()
	p.Endpoints = []string{"AWS_ENDPOINT_URL=http://localhost:4566"}
	var out bytes.Buffer
	p.print(&out)
	if !strings.Contains(out.String(), "NOT on AWS: on the endpoint of AWS_ENDPOINT_URL=http://localhost:4566") {
		t.Fatalf("plan:\n%s", &out)
	}
	if md := newReport(p).markdown(); !strings.Contains(md, "| target | NOT AWS: the endpoint of AWS_ENDPOINT_URL=http://localhost:4566") {
		t.Fatalf("report:\n%s", md)
	}
}
