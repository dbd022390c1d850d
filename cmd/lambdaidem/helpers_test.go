package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// world is one test's table on the in-process DynamoDB endpoint, with a
// Guard writing records into it as the functions would.
type world struct {
	ep     *ddbtest.Endpoint
	client *dynamodb.Client
	table  string
	guard  *lambdaidem.Guard
	// wrap, if set, wraps the client the command uses.
	wrap func(dynamostore.RecordsClient) dynamostore.RecordsClient
	// keys, if set, is the key service --kms-key names (any name).
	keys seal.KeyService
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ep := ddbtest.Start(t)
	w := &world{ep: ep, client: ep.Client(), table: ddbtest.TableName(t, "idem")}
	if err := ddbtest.CreateTable(context.Background(), w.client, w.table); err != nil {
		t.Fatal(err)
	}
	store, err := dynamostore.New(w.client, w.table)
	if err != nil {
		t.Fatal(err)
	}
	w.guard, err = lambdaidem.New(store, func(o *lambdaidem.Options) { o.Lease = time.Minute })
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// env is the command's environment in tests: a client built from explicit
// options (never the ambient AWS configuration) for the endpoint the
// command was given, and IDEMPOTENCY_TABLE set to the world's table.
func (w *world) env(vars map[string]string) env {
	return env{
		getenv: func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			if k == "IDEMPOTENCY_TABLE" {
				return w.table
			}
			return ""
		},
		now: time.Now,
		client: func(_ context.Context, endpoint, region string) (dynamostore.RecordsClient, error) {
			if endpoint == "" {
				return nil, errors.New("test: no endpoint given; the command must pass --endpoint or $AWS_ENDPOINT_URL_DYNAMODB on")
			}
			var c dynamostore.RecordsClient = ddbtest.NewClient(endpoint)
			if w.wrap != nil {
				c = w.wrap(c)
			}
			return c, nil
		},
		keys: func(_ context.Context, _, keyID string, _ []string) (seal.KeyService, error) {
			if w.keys == nil {
				return nil, errors.New("test: no key service for --kms-key " + keyID)
			}
			return w.keys, nil
		},
	}
}

// result is one run of the command.
type result struct {
	code        int
	out, errOut string
}

// cli runs the command with args, the world's endpoint in
// AWS_ENDPOINT_URL_DYNAMODB, and stdin.
func (w *world) cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, streams{in: strings.NewReader(stdin), out: &out, err: &errOut},
		w.env(map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": w.ep.URL}))
	return result{code, out.String(), errOut.String()}
}

var errProviderTimeout = errors.New("payment provider timed out")

// unknown leaves the record of key UNKNOWN, as a charge whose provider
// timed out would, and returns its record key.
func (w *world) unknown(t *testing.T, key string) string {
	t.Helper()
	leaveUnknown(t, w.guard, payCall(key))
	return recordKey(key)
}

// leaveUnknown runs call with g as a charge whose provider timed out after
// the external effect began: its record is left UNKNOWN.
func leaveUnknown(t *testing.T, g *lambdaidem.Guard, call lambdaidem.Call[string]) {
	t.Helper()
	_, err := lambdaidem.Do(context.Background(), g, call, func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		return "", errProviderTimeout
	})
	if !errors.Is(err, errProviderTimeout) {
		t.Fatalf("Do = %v", err)
	}
}

// completed runs key's operation to completion and returns its record key.
func (w *world) completed(t *testing.T, key, answer string) string {
	t.Helper()
	if _, err := lambdaidem.Do(context.Background(), w.guard, payCall(key), func(context.Context) (string, error) { return answer, nil }); err != nil {
		t.Fatal(err)
	}
	return recordKey(key)
}

func payCall(key string) lambdaidem.Call[string] {
	return lambdaidem.Call[string]{Operation: "CreatePayment", Key: key, Fingerprint: "fp"}
}

func recordKey(key string) string {
	return lambdaidem.RecordKey("lambdaidem", "", "CreatePayment", key)
}

// expect fails t unless r exited with code and its stdout and stderr
// contain the given strings.
func (r result) expect(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.out, stdout) || !strings.Contains(r.errOut, stderr) {
		t.Fatalf("exit %d; want %d with stdout containing %q and stderr %q\nstdout:\n%s\nstderr:\n%s", r.code, code, stdout, stderr, r.out, r.errOut)
	}
}
