package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// fakeCDK is a stand-in for the CDK CLI: a shell script that records its
// arguments and, for deploy, writes the outputs file as `cdk deploy
// --outputs-file` does (keyed by the suffixed stack names); it exits 1 when
// $FAKE_CDK_FAIL names the command, and waits for SIGINT when
// $FAKE_CDK_SLOW does.
const fakeCDK = `#!/bin/sh
echo "$@" >> "$FAKE_CDK_LOG"
[ "$1" = "$FAKE_CDK_FAIL" ] && { echo "fake cdk: $1 failed" >&2; exit 1; }
if [ "$1" = "$FAKE_CDK_SLOW" ]; then
  trap 'kill $pid; echo "interrupted $1" >> "$FAKE_CDK_LOG"; exit 130' INT
  sleep 30 & pid=$!
  wait
fi
if [ "$1" = deploy ]; then
  while [ $# -gt 0 ]; do
    if [ "$1" = --outputs-file ]; then
      printf '{"lambdaidem-payments-vtest0001":{"ApiUrl":"https://a.execute-api.eu-west-1.amazonaws.com/"},"lambdaidem-verify-vtest0001":{"ChaosTable":"c"}}' > "$2"
    fi
    shift
  done
fi
`

func newFakeCDK(t *testing.T, fail string) (*cdkDeployer, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "cdk")
	if err := os.WriteFile(bin, []byte(fakeCDK), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "calls")
	t.Setenv("FAKE_CDK_LOG", log)
	t.Setenv("FAKE_CDK_FAIL", fail)
	t.Setenv("FAKE_CDK_SLOW", "")
	return &cdkDeployer{CLI: []string{bin}, Dir: dir, Log: &bytes.Buffer{}}, log
}

func TestTheCDKDeployerRunsTheCLIWithTheRunsSuffixAndTag(t *testing.T) {
	d, log := newFakeCDK(t, "")
	p := testPlan()
	out, err := d.Deploy(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if out[stackPayments]["ApiUrl"] == "" || out[stackVerify]["ChaosTable"] != "c" {
		t.Fatalf("outputs %v; want them keyed by stack id, the suffix removed", out)
	}
	if err := d.Destroy(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(calls) != 2 {
		t.Fatalf("calls %q", calls)
	}
	ctx := "-c stackSuffix=-vtest0001 -c verifyStack=true -c destroyTables=true -c publicApi=true"
	for _, want := range []string{"deploy --all --require-approval never --outputs-file ", "--tags " + TagKey + "=vtest0001 " + ctx} {
		if !strings.Contains(calls[0], want) {
			t.Errorf("deploy %q lacks %q", calls[0], want)
		}
	}
	if calls[1] != "destroy --all --force "+ctx {
		t.Errorf("destroy %q; want the same context, forced", calls[1])
	}
}

func TestTheCDKDeployerReportsTheCLIsFailure(t *testing.T) {
	for _, cmd := range []string{"deploy", "destroy"} {
		d, _ := newFakeCDK(t, cmd)
		var err error
		if cmd == "deploy" {
			_, err = d.Deploy(t.Context(), testPlan())
		} else {
			err = d.Destroy(t.Context(), testPlan())
		}
		if err == nil || !strings.Contains(d.Log.(*bytes.Buffer).String(), "fake cdk: "+cmd+" failed") {
			t.Fatalf("%s: %v; want the CLI's failure, its output shown", cmd, err)
		}
	}
}

// The AWS world finds the payments and orders tables by the CDK's name
// prefix under the run's suffix, and the check tables in the outputs. The
// emulator has no ListTables: a handler answers it in two pages, as
// DynamoDB pages it.
func TestTheAWSWorldFindsTheRunsTables(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".ListTables") {
			http.Error(w, "only ListTables", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if !strings.Contains(string(body), "ExclusiveStartTableName") {
			_, _ = io.WriteString(w, `{"TableNames":["lambdaidem-orders-vtest0001-OrdersTableC3D4","lambdaidem-payments-vother-PaymentsTableXX"],"LastEvaluatedTableName":"lambdaidem-payments-vother-PaymentsTableXX"}`)
			return
		}
		_, _ = io.WriteString(w, `{"TableNames":["lambdaidem-payments-vtest0001-PaymentsTable1A2B"]}`)
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	out := outputs{stackVerify: {}}
	for _, role := range tableRoles {
		out[stackVerify][tableOutput(role)] = "t-" + role
	}
	w, err := awsWorld(context.Background(), cfg, "/dev", "vtest0001", out)
	if err != nil {
		t.Fatal(err)
	}
	if w.Outputs[stackPayments][outputPaymentsTable] != "lambdaidem-payments-vtest0001-PaymentsTable1A2B" ||
		w.Outputs[stackOrders][outputOrdersTable] != "lambdaidem-orders-vtest0001-OrdersTableC3D4" || w.table(tableChaos) != "t-Chaos" {
		t.Fatalf("world outputs %v, tables %v", w.Outputs, w.Tables)
	}
	delete(out[stackVerify], tableOutput(tableProbe))
	if _, err := awsWorld(context.Background(), cfg, "/dev", "vtest0001", out); err == nil || !strings.Contains(err.Error(), "ProbeTable") {
		t.Fatalf("a missing output: %v", err)
	}
}

// An interrupt during `cdk deploy` reaches the CLI as SIGINT (which lets
// CloudFormation finish or roll back), and the teardown follows.
func TestAnInterruptedDeploymentInterruptsTheCLIThenDestroys(t *testing.T) {
	d, log := newFakeCDK(t, "")
	t.Setenv("FAKE_CDK_SLOW", "deploy")
	r, _ := testRunner(d, "", true)
	sigs := make(chan os.Signal, 1)
	r.Signals = sigs
	go func() {
		for {
			if b, _ := os.ReadFile(log); strings.HasPrefix(string(b), "deploy") {
				sigs <- os.Interrupt
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := r.run(ctx, testPlan()); !errors.Is(err, errInterrupted) {
		t.Fatalf("run = %v; want interrupted", err)
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(calls) != 3 || !strings.HasPrefix(calls[0], "deploy") || calls[1] != "interrupted deploy" || !strings.HasPrefix(calls[2], "destroy") {
		t.Fatalf("calls %q; want deploy, its interruption, destroy", calls)
	}
}
