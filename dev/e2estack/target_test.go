package e2estack

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// outputsDoc is what `cdk deploy --outputs-file` writes for the CDK app on
// LocalStack.
const outputsDoc = `{
  "lambdaidem-payments": {"ApiUrl": "https://a1b2c3d4.execute-api.us-east-1.amazonaws.com/"},
  "lambdaidem-orders": {
    "QueueUrl": "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/lambdaidem-orders-OrdersQueue-x",
    "DlqUrl": "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/lambdaidem-orders-OrdersDeadLetterQueue-y"
  }
}`

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnvDefaultsToTheEmbeddedStack(t *testing.T) {
	for _, v := range []string{"", "embedded", " Embedded "} {
		c, err := ConfigFromEnv(env(map[string]string{EnvTarget: v}), t.TempDir())
		if err != nil || c.Target != TargetEmbedded {
			t.Errorf("E2E_TARGET=%q: got %+v, %v; want the embedded target", v, c, err)
		}
	}
}

func TestConfigFromEnvRejectsAnUnknownTarget(t *testing.T) {
	_, err := ConfigFromEnv(env(map[string]string{EnvTarget: "gcp"}), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `"localstack" or "aws"`) {
		t.Fatalf("want an error naming the valid targets, got %v", err)
	}
}

func TestConfigFromEnvReadsTheLocalStackOutputs(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "localstack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, DefaultOutputs), []byte(outputsDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ConfigFromEnv(env(map[string]string{EnvTarget: "localstack"}), root)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Target:      TargetLocalStack,
		Endpoint:    DefaultLocalStackEndpoint,
		OutputsFile: filepath.Join(root, DefaultOutputs),
		APIURL:      "http://a1b2c3d4.execute-api.localhost.localstack.cloud:4566/",
		QueueURL:    "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/lambdaidem-orders-OrdersQueue-x",
		DLQURL:      "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/lambdaidem-orders-OrdersDeadLetterQueue-y",
	}
	if c != want {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
}

func TestConfigFromEnvHonoursOverrides(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(outputs, []byte(outputsDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ConfigFromEnv(env(map[string]string{
		EnvTarget: "localstack", EnvOutputs: outputs, EnvEndpoint: "http://127.0.0.1:4599/",
		EnvPaymentsTable: "p", EnvOrdersTable: "o",
	}), "/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://127.0.0.1:4599" || c.APIURL != "http://a1b2c3d4.execute-api.localhost.localstack.cloud:4599/" ||
		c.PaymentsTable != "p" || c.OrdersTable != "o" || c.OutputsFile != outputs {
		t.Fatalf("overrides not applied: %+v", c)
	}
}

func TestConfigFromEnvExplainsAMissingOrBrokenOutputsFile(t *testing.T) {
	root := t.TempDir()
	_, err := ConfigFromEnv(env(map[string]string{EnvTarget: "localstack"}), root)
	if err == nil || !strings.Contains(err.Error(), "make localstack-deploy") {
		t.Fatalf("a missing outputs file: want a hint to deploy first, got %v", err)
	}
	cases := map[string]string{
		"not JSON":          `ApiUrl = x`,
		"no orders stack":   `{"lambdaidem-payments": {"ApiUrl": "https://x.execute-api.us-east-1.amazonaws.com/"}}`,
		"no payments stack": `{"lambdaidem-orders": {"QueueUrl": "q", "DlqUrl": "d"}}`,
		"no DLQ output":     `{"lambdaidem-payments": {"ApiUrl": "https://x.execute-api.us-east-1.amazonaws.com/"}, "lambdaidem-orders": {"QueueUrl": "q"}}`,
		"bad API URL":       `{"lambdaidem-payments": {"ApiUrl": "https://example.com/"}, "lambdaidem-orders": {"QueueUrl": "q", "DlqUrl": "d"}}`,
		"not a string":      `{"lambdaidem-payments": {"ApiUrl": 42}}`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "o.json")
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ConfigFromEnv(env(map[string]string{EnvTarget: "localstack", EnvOutputs: p}), root); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	if _, err := ConfigFromEnv(env(map[string]string{EnvTarget: "localstack", EnvEndpoint: "localhost:4566"}), root); err == nil {
		t.Fatal("an endpoint without a scheme: want an error")
	}
}

func TestConfigFromEnvWithoutAnHTTPAPILeavesTheAPIURLEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "o.json")
	doc := `{"lambdaidem-payments": {}, "lambdaidem-orders": {"QueueUrl": "q", "DlqUrl": "d"}}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ConfigFromEnv(env(map[string]string{EnvTarget: "localstack", EnvOutputs: p}), "/")
	if err != nil || c.APIURL != "" || c.QueueURL != "q" {
		t.Fatalf("got %+v, %v; want no API URL (the suite invokes the function itself)", c, err)
	}
}

// outputsWithoutHTTPAPI is what `make localstack-deploy` (cdk -c
// httpApi=false) writes: no ApiUrl, the function names instead.
const outputsWithoutHTTPAPI = `{
  "lambdaidem-payments": {"PaymentsFunctionName": " lambdaidem-payments-PaymentsFunction1A2B3C-xyz "},
  "lambdaidem-orders": {"QueueUrl": "q", "DlqUrl": "d", "OrdersFunctionName": "lambdaidem-orders-OrdersFunctionD4E5-abc"}
}`

func TestConfigFromEnvTakesThePaymentsFunctionFromTheOutputs(t *testing.T) {
	cases := map[string]struct{ doc, wantAPI, wantFn string }{
		"no ApiUrl: the PaymentsFunctionName output": {
			doc: outputsWithoutHTTPAPI, wantFn: "lambdaidem-payments-PaymentsFunction1A2B3C-xyz",
		},
		"an ApiUrl wins: the function is not needed": {
			doc: `{"lambdaidem-payments": {"ApiUrl": "https://abc.execute-api.us-east-1.amazonaws.com/", "PaymentsFunctionName": "f"},
			       "lambdaidem-orders": {"QueueUrl": "q", "DlqUrl": "d"}}`,
			wantAPI: "http://abc.execute-api.localhost.localstack.cloud:4566/",
		},
		"neither (an older deployment): found by prefix later": {
			doc: `{"lambdaidem-payments": {}, "lambdaidem-orders": {"QueueUrl": "q", "DlqUrl": "d"}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "o.json")
			if err := os.WriteFile(p, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := ConfigFromEnv(env(map[string]string{EnvTarget: "localstack", EnvOutputs: p}), "/")
			if err != nil {
				t.Fatal(err)
			}
			if c.APIURL != tc.wantAPI || c.PaymentsFunction != tc.wantFn || c.QueueURL != "q" {
				t.Fatalf("got APIURL %q, PaymentsFunction %q (%+v); want %q, %q", c.APIURL, c.PaymentsFunction, c, tc.wantAPI, tc.wantFn)
			}
		})
	}
}

func TestPaymentsFunctionPrefersTheOutputOverListing(t *testing.T) {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/2015-03-31/functions/" {
			http.NotFound(w, r)
			return
		}
		lists.Add(1)
		_, _ = w.Write([]byte(`{"Functions": [
			{"FunctionName": "lambdaidem-orders-OrdersFunctionD4E5-abc"},
			{"FunctionName": "lambdaidem-payments-PaymentsFunction9Z-listed"}]}`))
	}))
	t.Cleanup(srv.Close)

	fn, err := PaymentsFunction(t.Context(), Config{Endpoint: srv.URL, PaymentsFunction: "from-the-output"})
	if err != nil || fn != "from-the-output" || lists.Load() != 0 {
		t.Fatalf("with the output: got %q, %v after %d ListFunctions calls; want the output, no listing", fn, err, lists.Load())
	}
	fn, err = PaymentsFunction(t.Context(), Config{Endpoint: srv.URL})
	if err != nil || fn != "lambdaidem-payments-PaymentsFunction9Z-listed" || lists.Load() != 1 {
		t.Fatalf("without the output: got %q, %v after %d ListFunctions calls; want the listed function", fn, err, lists.Load())
	}
	srv.Close()
	if _, err := PaymentsFunction(t.Context(), Config{Endpoint: srv.URL}); err == nil {
		t.Fatal("LocalStack unreachable and no output: want an error")
	}
}

func TestOutputsGetNamesWhatIsThere(t *testing.T) {
	out, err := ReadOutputs([]byte(outputsDoc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = out.Get(OrdersStack, "Nope")
	if err == nil || !strings.Contains(err.Error(), "DlqUrl, QueueUrl") {
		t.Fatalf("want the available outputs listed, got %v", err)
	}
	_, err = out.Get("other", OutputAPIURL)
	if err == nil || !strings.Contains(err.Error(), "lambdaidem-orders, lambdaidem-payments") {
		t.Fatalf("want the deployed stacks listed, got %v", err)
	}
}

func TestLocalStackAPIURL(t *testing.T) {
	cases := []struct{ raw, endpoint, want string }{
		{"https://abc.execute-api.us-east-1.amazonaws.com/", "http://localhost.localstack.cloud:4566", "http://abc.execute-api.localhost.localstack.cloud:4566/"},
		{"https://abc.execute-api.localhost.localstack.cloud:4566/", "http://localhost:4566", "http://abc.execute-api.localhost.localstack.cloud:4566/"},
		{"https://abc.execute-api.us-east-1.amazonaws.com/prod", "https://ls.example:443", "https://abc.execute-api.localhost.localstack.cloud:443/prod/"},
		{"https://abc.execute-api.us-east-1.amazonaws.com", "http://127.0.0.1", "http://abc.execute-api.localhost.localstack.cloud:4566/"},
	}
	for _, c := range cases {
		got, err := LocalStackAPIURL(c.raw, c.endpoint)
		if err != nil || got != c.want {
			t.Errorf("LocalStackAPIURL(%q, %q) = %q, %v; want %q", c.raw, c.endpoint, got, err, c.want)
		}
	}
	if _, err := LocalStackAPIURL("https://api.example.com/", "http://localhost:4566"); err == nil {
		t.Error("a host without <id>.execute-api: want an error")
	}
}

func TestFindTableMatchesTheCDKNamePrefix(t *testing.T) {
	names := []string{
		"lambdaidem-payments-IdempotencyTable1A2B-XYZ",
		"lambdaidem-payments-PaymentsTableC3D4-ABC",
		"lambdaidem-orders-OrdersTableE5F6-DEF",
	}
	got, err := FindTable(names, PaymentsStack, "PaymentsTable")
	if err != nil || got != "lambdaidem-payments-PaymentsTableC3D4-ABC" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := FindTable(names, OrdersStack, "Missing"); err == nil {
		t.Error("no match: want an error")
	}
	if _, err := FindTable(append(names, "lambdaidem-orders-OrdersTableZZ-2"), OrdersStack, "OrdersTable"); err == nil {
		t.Error("two matches: want an error")
	}
}

func TestMaxReceiveCountReadsNumbersAndStrings(t *testing.T) {
	for doc, want := range map[string]int{
		`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":3}`:   3,
		`{"maxReceiveCount": "5", "deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d"}`: 5,
	} {
		if got, err := MaxReceiveCount(doc); err != nil || got != want {
			t.Errorf("MaxReceiveCount(%s) = %d, %v; want %d", doc, got, err, want)
		}
	}
	for _, doc := range []string{"", `{"maxReceiveCount": 0}`, `{"maxReceiveCount": "x"}`, `not json`} {
		if _, err := MaxReceiveCount(doc); err == nil {
			t.Errorf("MaxReceiveCount(%q): want an error", doc)
		}
	}
}

func TestConfigFromEnvReadsTheAWSOutputsAsTheyAre(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "outputs.json")
	doc := `{"lambdaidem-payments": {"ApiUrl": "https://abc.execute-api.eu-west-1.amazonaws.com"},
	  "lambdaidem-orders": {"QueueUrl": "https://sqs.eu-west-1.amazonaws.com/1/q", "DlqUrl": "https://sqs.eu-west-1.amazonaws.com/1/d"}}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{EnvTarget: "aws", EnvOutputs: path, EnvPaymentsTable: "p", EnvOrdersTable: "o"}
	c, err := ConfigFromEnv(env(vars), root)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Target: TargetAWS, OutputsFile: path, APIURL: "https://abc.execute-api.eu-west-1.amazonaws.com/",
		QueueURL: "https://sqs.eu-west-1.amazonaws.com/1/q", DLQURL: "https://sqs.eu-west-1.amazonaws.com/1/d", PaymentsTable: "p", OrdersTable: "o"}
	if c != want {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
	delete(vars, EnvOrdersTable)
	if _, err := ConfigFromEnv(env(vars), root); err == nil || !strings.Contains(err.Error(), EnvOrdersTable) {
		t.Fatalf("without %s: %v; want an error naming it", EnvOrdersTable, err)
	}
}
