package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dev/e2estack"
)

// The tables the checks use, by role: an idempotency table (created by the
// lambdaidemcdk construct on AWS, by ddbtest.CreateTable locally) and a
// business table beside it, both keyed by the string "id". The verify
// stack outputs each as <role>Table.
const (
	tableConformance      = "Conformance"
	tableConformanceItems = "ConformanceItems"
	tableContention       = "Contention"
	tableContentionItems  = "ContentionItems"
	tableChaos            = "Chaos"
	tableChaosItems       = "ChaosItems"
	tableProbe            = "Probe"
	tableProbeItems       = "ProbeItems"
	tableCapacity         = "Capacity"
	tableCapacityItems    = "CapacityItems"
)

// tableRoles lists every role, idempotency tables first.
var tableRoles = []string{tableConformance, tableContention, tableChaos, tableProbe, tableCapacity,
	tableConformanceItems, tableContentionItems, tableChaosItems, tableProbeItems, tableCapacityItems}

// Stack ids of the CDK app (without a run's suffix) and the verify stack's
// output of a role's table.
const (
	stackPayments = "lambdaidem-payments"
	stackOrders   = "lambdaidem-orders"
	stackVerify   = "lambdaidem-verify"
)

func tableOutput(role string) string { return role + "Table" }

// world is what the checks run against.
type world struct {
	// Local is true in LOCAL mode.
	Local bool
	// Region is the AWS Region ("" locally).
	Region string
	// Tables are the check tables' names by role.
	Tables map[string]string
	// Outputs are the stacks' outputs (the payments and orders stacks on
	// AWS; none locally, where the flows start their own stack).
	Outputs outputs
	// Env is the environment the checks that run `go test` add to their own.
	Env []string
	// DevDir is the dev module's folder, where `go test` runs.
	DevDir string
	// Proxy is the in-process endpoint's proxy (LOCAL only; nil on AWS).
	Proxy *ddbtest.Proxy

	// newClient returns a DynamoDB client for the target with optFns; wrap,
	// when not nil, wraps its HTTP transport (the chaos run's faults).
	newClient func(wrap func(http.RoundTripper) http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client
}

// client returns a DynamoDB client for the target.
func (w *world) client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return w.newClient(nil, optFns...)
}

// table returns the table of role, or panics on a programming error (a
// role the deployment does not create); runOne turns it into a failure.
func (w *world) table(role string) string {
	t, ok := w.Tables[role]
	if !ok {
		panic(fmt.Sprintf("awsverify: no %s table in the deployment", role))
	}
	return t
}

// Outputs the world adds for the flows: the payments and orders tables,
// found by the CDK's name prefix (<stack>-<construct id>).
const (
	outputPaymentsTable = "PaymentsTableName"
	outputOrdersTable   = "OrdersTableName"
)

// awsWorld is the world of a deployment on AWS.
func awsWorld(ctx context.Context, cfg aws.Config, devDir, runID string, out outputs) (*world, error) {
	w := &world{Region: cfg.Region, Tables: map[string]string{}, Outputs: out, DevDir: devDir,
		Env: []string{"AWS_REGION=" + cfg.Region}}
	for _, role := range tableRoles {
		name := out[stackVerify][tableOutput(role)]
		if name == "" {
			return nil, fmt.Errorf("the %s stack has no %s output", stackVerify, tableOutput(role))
		}
		w.Tables[role] = name
	}
	w.newClient = func(wrap func(http.RoundTripper) http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
		return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
			if wrap != nil {
				o.HTTPClient = &http.Client{Transport: wrap(newTransport()), Timeout: 30 * time.Second}
			}
		}}, optFns...)...)
	}
	names, err := listTables(ctx, w.client())
	if err != nil {
		return nil, err
	}
	for stack, find := range map[string][2]string{stackPayments: {"PaymentsTable", outputPaymentsTable}, stackOrders: {"OrdersTable", outputOrdersTable}} {
		suffixed := stack + "-" + runID
		name, err := e2estack.FindTable(names, suffixed, find[0])
		if err != nil {
			return nil, err
		}
		if out[stack] == nil {
			out[stack] = map[string]string{}
		}
		out[stack][find[1]] = name
	}
	return w, nil
}

// listTables lists the account's tables in the Region (at most 100 pages).
func listTables(ctx context.Context, c *dynamodb.Client) ([]string, error) {
	var names []string
	var start *string
	for range 100 {
		out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{ExclusiveStartTableName: start})
		if err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		names = append(names, out.TableNames...)
		if start = out.LastEvaluatedTableName; start == nil {
			break
		}
	}
	return names, nil
}

// localDeployer is the LOCAL mode's deployment: a fresh endpoint of the
// world $LAMBDAIDEM_WORLD selects (minidyn, or a Dynoxide process, behind
// ddbtest's fidelity proxy, served on loopback: ddbtest.Open) with the
// check tables. Destroy stops it.
type localDeployer struct {
	DevDir string

	mu       sync.Mutex
	endpoint *ddbtest.Endpoint
	proxy    *ddbtest.Proxy
}

func (d *localDeployer) Deploy(ctx context.Context, p *plan) (outputs, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ep, err := openLocal(ctx)
	if err != nil {
		return nil, err
	}
	d.endpoint, d.proxy = ep, ep.Proxy
	client := ddbtest.NewClient(ep.URL)
	out := outputs{stackVerify: {}}
	for _, role := range tableRoles {
		name := role + "-" + p.RunID
		if err := ddbtest.CreateTable(ctx, client, name); err != nil {
			return out, err
		}
		out[stackVerify][tableOutput(role)] = name
	}
	return out, nil
}

func (d *localDeployer) Destroy(context.Context, *plan) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.endpoint != nil {
		d.endpoint.Close()
		d.endpoint = nil
	}
	return nil
}

// localBackend names what LOCAL mode's endpoint runs on: the world
// $LAMBDAIDEM_WORLD selects.
func localBackend() string {
	if w, err := ddbtest.SelectedWorld(); err == nil && w == ddbtest.WorldDynoxide {
		return "a Dynoxide process"
	}
	return "the in-process minidyn emulator"
}

// openLocal starts a local endpoint behind ddbtest's proxy, in the world
// $LAMBDAIDEM_WORLD selects.
func openLocal(ctx context.Context) (*ddbtest.Endpoint, error) {
	ep, err := ddbtest.Open(ctx)
	if err != nil {
		return nil, err
	}
	if ep.Proxy == nil {
		ep.Close()
		return nil, fmt.Errorf("the local endpoint needs ddbtest's proxy: unset %s", ddbtest.EnvEndpoint)
	}
	return ep, nil
}

// world is the LOCAL world over the deployed endpoint.
func (d *localDeployer) world(_ context.Context, out outputs) (*world, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.endpoint == nil {
		return nil, fmt.Errorf("the local endpoint is not running")
	}
	url := d.endpoint.URL
	w := &world{Local: true, Tables: map[string]string{}, Outputs: out, DevDir: d.DevDir, Proxy: d.proxy,
		Env: []string{ddbtest.EnvEndpoint + "=" + url, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"}}
	for _, role := range tableRoles {
		w.Tables[role] = out[stackVerify][tableOutput(role)]
	}
	w.newClient = func(wrap func(http.RoundTripper) http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
		return localClient(url, wrap, optFns...)
	}
	return w, nil
}

// newTransport is an HTTP transport with room for the checks' concurrency.
func newTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 128, 128
	return tr
}

// localClient is a client of an in-process endpoint at url, built from
// explicit options (ddbtest.NewClient), then optFns.
func localClient(url string, wrap func(http.RoundTripper) http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	base := ddbtest.NewClient(url, func(o *ddbtest.ClientOptions) {
		if wrap != nil {
			o.HTTPClient = &http.Client{Transport: wrap(newTransport()), Timeout: 30 * time.Second}
		}
	})
	if len(optFns) == 0 {
		return base
	}
	return dynamodb.New(base.Options(), optFns...)
}

// reference is a fresh local ddbtest endpoint (in the world
// $LAMBDAIDEM_WORLD selects) with tables, the side the target's answers are
// compared with.
type reference struct {
	url    string
	proxy  *ddbtest.Proxy
	tables map[string]string
	result any
}

// client returns a client of the reference endpoint.
func (r *reference) client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return localClient(r.url, nil, optFns...)
}

// withReference starts a reference endpoint with one idempotency-schema
// table per name, runs fn, stops the endpoint and returns fn's result.
func withReference(ctx context.Context, names []string, fn func(ctx context.Context, r *reference) error) (any, error) {
	ep, err := openLocal(ctx)
	if err != nil {
		return nil, err
	}
	defer ep.Close()
	r := &reference{url: ep.URL, proxy: ep.Proxy, tables: map[string]string{}}
	for _, name := range names {
		if err := ddbtest.CreateTable(ctx, r.client(), "reference-"+name); err != nil {
			return nil, err
		}
		r.tables[name] = "reference-" + name
	}
	err = fn(ctx, r)
	return r.result, err
}

// flowsEnv is the end-to-end suite's target: the embedded stack locally,
// else the deployed stacks, whose outputs it reads from a file.
func (w *world) flowsEnv() ([]string, error) {
	if w.Local {
		// The suite starts its own embedded stack; it must not inherit the
		// LOCAL endpoint meant for the conformance suite.
		return []string{e2estack.EnvTarget + "=" + string(e2estack.TargetEmbedded), ddbtest.EnvEndpoint + "="}, nil
	}
	doc, err := json.Marshal(w.Outputs)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "awsverify-outputs-*.json")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Write(doc); err != nil {
		return nil, err
	}
	return []string{e2estack.EnvTarget + "=" + string(e2estack.TargetAWS), e2estack.EnvOutputs + "=" + f.Name(),
		e2estack.EnvPaymentsTable + "=" + w.Outputs[stackPayments][outputPaymentsTable],
		e2estack.EnvOrdersTable + "=" + w.Outputs[stackOrders][outputOrdersTable]}, nil
}
