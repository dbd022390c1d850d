package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// sampleEndpoint stands for the in-process endpoint's address (a free port)
// in the samples.
const sampleEndpoint = "http://127.0.0.1:8000"

// sampleWorld is a table named as in the samples, records written by a
// Guard on a clock that stands still and with counted attempt tokens, so
// that every revision, time and age in a sample is the same on each run.
type sampleWorld struct {
	ep    *ddbtest.Endpoint
	table string
	now   time.Time
}

func newSampleWorld(t *testing.T) *sampleWorld {
	t.Helper()
	ep := ddbtest.Start(t)
	w := &sampleWorld{ep: ep, table: "payments-idempotency", now: time.Date(2026, 12, 1, 13, 11, 53, 497e6, time.UTC)}
	if err := ddbtest.CreateTable(context.Background(), ep.Client(), w.table); err != nil {
		t.Fatal(err)
	}
	return w
}

// guard writes records under namespace.
func (w *sampleWorld) guard(t *testing.T, namespace string) *lambdaidem.Guard {
	t.Helper()
	store, err := dynamostore.New(w.ep.Client(), w.table)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.Namespace, o.Lease = namespace, time.Minute
		o.Now = func() time.Time { return w.now }
		o.NewToken = func() string { n++; return fmt.Sprintf("%s-token-%d", namespace, n) }
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// session runs each command (stdin, then the arguments) and returns the
// session as a reader sees it: "$ lambdaidem …", stdout, stderr and, if
// withExit, "[exit N]".
func (w *sampleWorld) session(withExit bool, cmds ...[]string) string {
	var b strings.Builder
	for _, c := range cmds {
		stdin, args := c[0], c[1:]
		var out bytes.Buffer
		e := env{
			getenv: func(k string) string {
				switch k {
				case "IDEMPOTENCY_TABLE":
					return w.table
				case "AWS_ENDPOINT_URL_DYNAMODB":
					return w.ep.URL
				}
				return ""
			},
			now: func() time.Time { return w.now },
			client: func(context.Context, string, string) (dynamostore.RecordsClient, error) {
				return ddbtest.NewClient(w.ep.URL), nil
			},
			progressEvery: time.Hour, // the clock stands still: no progress lines
		}
		code := run(context.Background(), args, streams{in: strings.NewReader(stdin), out: &out, err: &out}, e)
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = a
			if strings.ContainsAny(a, " {}\"'") {
				quoted[i] = "'" + a + "'"
			}
		}
		fmt.Fprintf(&b, "$ lambdaidem %s\n%s", strings.Join(quoted, " "), strings.ReplaceAll(out.String(), w.ep.URL, sampleEndpoint))
		if withExit {
			fmt.Fprintf(&b, "[exit %d]\n", code)
		}
	}
	return b.String()
}

// checkSample compares the block after <!-- sample: name --> in doc (a
// path from the repository's root) with got; with LAMBDAIDEM_UPDATE_SAMPLES=1
// in the environment it writes got there instead.
func checkSample(t *testing.T, doc, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", doc)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	marker := "<!-- sample: " + name + " -->\n```text\n"
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("%s: no %q block", doc, marker)
	}
	start := i + len(marker)
	end := strings.Index(text[start:], "```\n")
	if end < 0 {
		t.Fatalf("%s: the %s block is not closed", doc, name)
	}
	if os.Getenv("LAMBDAIDEM_UPDATE_SAMPLES") == "1" {
		if err := os.WriteFile(path, []byte(text[:start]+got+text[start+end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := text[start : start+end]; want != got {
		t.Errorf("%s: the %s sample is not what the command prints now (LAMBDAIDEM_UPDATE_SAMPLES=1 go test -run TestDocSamples rewrites it):\n--- doc\n%s--- command\n%s", doc, name, want, got)
	}
}

// TestDocSamples: the sessions in README.md and cmd/lambdaidem/README.md
// are what the command prints, run here against the in-process endpoint.
func TestDocSamples(t *testing.T) {
	ctx := context.Background()
	t.Run("README", func(t *testing.T) {
		w := newSampleWorld(t)
		g := w.guard(t, "capture")
		call := lambdaidem.Call[string]{Operation: "CapturePayment", Key: "order-1004", Fingerprint: "order-1004:4200EUR"}
		leaveUnknown(t, g, call)
		rk := lambdaidem.RecordKey("capture", "", "CapturePayment", "order-1004")
		checkSample(t, "README.md", "the command", w.session(false,
			[]string{"", "list", "--stuck"},
			[]string{"", "show", rk},
			[]string{"", "resolve", "--done", "--outcome", `{"charge":"ch_1","amount":4200}`, rk},
			[]string{"", "show", rk},
		))
	})
	t.Run("cmd/lambdaidem/README", func(t *testing.T) {
		w := newSampleWorld(t)
		g := w.guard(t, "lambdaidem")
		for _, key := range []string{"3f6c1e0a-8d2b-4b7e-9f51-0c2a7d9e4b13", "9d41b7c2-0e55-4f3a-8c6d-2b7e1f0a9c38"} {
			leaveUnknown(t, g, payCall(key))
		}
		if _, err := lambdaidem.Do(ctx, g, payCall("c5e8a2d4-7b19-4e6f-a3c0-5d9f2e8b1a74"), func(context.Context) (string, error) { return `{"id":"pay_1"}`, nil }); err != nil {
			t.Fatal(err)
		}
		rk, done := recordKey("3f6c1e0a-8d2b-4b7e-9f51-0c2a7d9e4b13"), recordKey("c5e8a2d4-7b19-4e6f-a3c0-5d9f2e8b1a74")
		checkSample(t, "cmd/lambdaidem/README.md", "a session", w.session(true,
			[]string{"", "key", "--operation", "CreatePayment", "3f6c1e0a-8d2b-4b7e-9f51-0c2a7d9e4b13"},
			[]string{"", "list", "--stuck", "--segments", "1"}, // one segment: the scan's order
			[]string{"", "show", rk},
			[]string{"", "resolve", "--not-done", "--revision", "AAAAAAAAAAAA", rk},
			[]string{"", "resolve", "--not-done", rk},
			[]string{"", "resolve", "--not-done", rk},
			[]string{"", "show", "--table", "payments-idempotency-typo", rk},
			[]string{"", "show", "lambdaidem#3f6c1e0a"},
			[]string{"", "show", done},
			[]string{"", "list", "--status", "COMPLETED", "--json"},
			[]string{"no\n", "forget", done},
		))
	})
}
