//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
	"github.com/lambdaidem/lambdaidem/dev/e2estack"
)

// stack is what the scenarios drive, on either target.
type stack struct {
	target e2estack.Target
	http   *http.Client

	apiURL        string // payments API base, no trailing slash
	managedAPIURL string // Lambda Managed Instances instance; "" if none
	managedWhy    string // why there is none

	ddb           *dynamodb.Client
	paymentsTable string
	ordersTable   string

	sqs        *sqs.Client
	queueURL   string
	dlqURL     string
	visibility time.Duration
	maxReceive int

	emb *e2estack.Embedded // nil on LocalStack: no fault injection, no poller

	logPath string // the functions' output; "" on LocalStack
}

// startStack starts (embedded) or connects to (LocalStack) the target named
// by E2E_TARGET.
func startStack(t *testing.T) *stack {
	t.Helper()
	ctx := t.Context()
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e2estack.ConfigFromEnv(os.Getenv, root)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Target == e2estack.TargetLocalStack {
		return connectLocalStack(t, cfg)
	}
	return startEmbedded(t, root)
}

func startEmbedded(t *testing.T, root string) *stack {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the embedded stack runs Linux bootstraps under the Runtime Interface Emulator; this is " + runtime.GOOS)
	}
	rieBin, err := rie.Find(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	logPath := os.Getenv("E2E_LOG") // keep the functions' log there
	if logPath == "" {
		logPath = filepath.Join(work, "functions.log")
	}
	log := newLogFile(t, logPath)
	managed := 8
	ok, why := rie.ManagedInstancesSupported()
	if !ok {
		managed = 0
	}
	start := time.Now()
	emb, err := e2estack.StartEmbedded(t.Context(), e2estack.EmbeddedOptions{
		RIE: rieBin, WorkDir: work, ModuleRoot: root, Log: log,
		PaymentsInstances:  4,
		PaymentsTimeout:    3 * time.Second,
		ManagedConcurrency: managed,
		OrdersTimeout:      2 * time.Second,
		OrdersVisibility:   3 * time.Second,
		// High enough that the crash scenario's in-flight message (reported
		// failed until its lease lapses: 2s timeout + 5s margin) does not
		// reach the dead-letter queue.
		OrdersMaxReceiveCount: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	t.Logf("embedded stack up in %v: DynamoDB %s, SQS %s, API %s (4 instances), managed API %q",
		time.Since(start).Round(time.Millisecond), emb.DynamoDB.URL, emb.SQS.URL, emb.APIURL, emb.ManagedAPIURL)
	return &stack{
		target:        e2estack.TargetEmbedded,
		http:          &http.Client{Timeout: 30 * time.Second},
		apiURL:        emb.APIURL,
		managedAPIURL: emb.ManagedAPIURL,
		managedWhy:    why,
		ddb:           emb.DynamoDB.Client,
		paymentsTable: emb.PaymentsTable,
		ordersTable:   emb.OrdersTable,
		sqs:           emb.SQS.Client,
		queueURL:      emb.QueueURL,
		dlqURL:        emb.DLQURL,
		visibility:    emb.OrdersVisibility,
		maxReceive:    emb.OrdersMaxReceiveCount,
		emb:           emb,
		logPath:       logPath,
	}
}

func connectLocalStack(t *testing.T, cfg e2estack.Config) *stack {
	t.Helper()
	ctx := t.Context()
	s := &stack{
		target:     e2estack.TargetLocalStack,
		http:       &http.Client{Timeout: 60 * time.Second},
		apiURL:     strings.TrimSuffix(cfg.APIURL, "/"),
		managedWhy: "LocalStack runs functions one invocation per container; Lambda Managed Instances are not emulated",
		ddb:        ddbtest.NewClient(cfg.Endpoint),
		sqs:        e2estack.NewSQSClient(cfg.Endpoint, false),
		queueURL:   cfg.QueueURL,
		dlqURL:     cfg.DLQURL,
	}
	s.paymentsTable, s.ordersTable = cfg.PaymentsTable, cfg.OrdersTable
	if s.paymentsTable == "" || s.ordersTable == "" {
		names, err := listTables(ctx, s.ddb)
		if err != nil {
			t.Fatal(err)
		}
		if s.paymentsTable == "" {
			if s.paymentsTable, err = e2estack.FindTable(names, e2estack.PaymentsStack, "PaymentsTable"); err != nil {
				t.Fatal(err)
			}
		}
		if s.ordersTable == "" {
			if s.ordersTable, err = e2estack.FindTable(names, e2estack.OrdersStack, "OrdersTable"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s.apiURL == "" {
		// No HTTP API (LocalStack's community image lacks API Gateway v2):
		// play it here, in front of the function LocalStack runs.
		fn, err := e2estack.PaymentsFunction(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		gw, err := e2estack.StartGateway(e2estack.LambdaInvoker{Endpoint: cfg.Endpoint, Function: fn}, e2estack.PaymentsRoutes()...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(gw.Close)
		s.apiURL = gw.URL
		t.Logf("no ApiUrl output: a local HTTP API at %s invokes %s on LocalStack", gw.URL, fn)
	}
	attrs, err := s.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(s.queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameVisibilityTimeout, sqstypes.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		t.Fatalf("read the orders queue's settings: %v", err)
	}
	vis, _ := strconv.Atoi(attrs.Attributes["VisibilityTimeout"])
	s.visibility = time.Duration(vis) * time.Second
	if s.maxReceive, err = e2estack.MaxReceiveCount(attrs.Attributes["RedrivePolicy"]); err != nil {
		t.Fatal(err)
	}
	t.Logf("LocalStack at %s: API %s, queue %s (visibility %v, maxReceiveCount %d), tables %s, %s",
		cfg.Endpoint, s.apiURL, s.queueURL, s.visibility, s.maxReceive, s.paymentsTable, s.ordersTable)
	return s
}

func listTables(ctx context.Context, c *dynamodb.Client) ([]string, error) {
	var names []string
	var start *string
	for range 100 { // bounded: 100 pages of 100 tables
		out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{ExclusiveStartTableName: start})
		if err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		names = append(names, out.TableNames...)
		if out.LastEvaluatedTableName == nil {
			return names, nil
		}
		start = out.LastEvaluatedTableName
	}
	return names, nil
}

// needFaults skips a scenario that injects faults on a target without the
// harness's DynamoDB endpoint and emulators.
func (s *stack) needFaults(t *testing.T) *e2estack.Embedded {
	t.Helper()
	if s.emb == nil {
		t.Skip(e2estack.ErrNoFaults)
	}
	return s.emb
}

// logFile collects the functions' output; a failed test prints its tail.
type logFile struct {
	mu sync.Mutex
	f  *os.File
}

func newLogFile(t *testing.T, path string) *logFile {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	l := &logFile{f: f}
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if t.Failed() {
			printTail(t, path, 80)
		}
		f.Close()
	})
	return l
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

func printTail(t *testing.T, path string, n int) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	t.Logf("last %d lines of the functions' log:\n%s", len(lines), strings.Join(lines, "\n"))
}
