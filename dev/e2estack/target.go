package e2estack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Target names where the suite runs.
type Target string

// The targets.
const (
	// TargetEmbedded is the default: everything in process or under the
	// Runtime Interface Emulator on this machine.
	TargetEmbedded Target = "embedded"
	// TargetLocalStack drives the CDK app deployed to LocalStack.
	TargetLocalStack Target = "localstack"
	// TargetAWS drives the CDK app deployed to AWS by `make aws-verify`,
	// with the SDK's default configuration (the caller's credentials and
	// Region). The tables are named by E2E_PAYMENTS_TABLE and
	// E2E_ORDERS_TABLE.
	TargetAWS Target = "aws"
)

// Environment variables read by [ConfigFromEnv].
const (
	EnvTarget        = "E2E_TARGET"          // embedded (default), localstack or aws
	EnvOutputs       = "E2E_OUTPUTS"         // cdk --outputs-file JSON (localstack)
	EnvEndpoint      = "LOCALSTACK_ENDPOINT" // LocalStack's edge URL
	EnvPaymentsTable = "E2E_PAYMENTS_TABLE"  // override table discovery
	EnvOrdersTable   = "E2E_ORDERS_TABLE"    // override table discovery
)

// Stack ids of the CDK app (cdk/stacks) and the outputs the suite reads.
const (
	PaymentsStack = "lambdaidem-payments"
	OrdersStack   = "lambdaidem-orders"
	OutputAPIURL  = "ApiUrl"
	OutputQueue   = "QueueUrl"
	OutputDLQ     = "DlqUrl"
	// OutputPaymentsFunction names the payments function, for invoking it
	// when the stack has no HTTP API (cdk -c httpApi=false).
	OutputPaymentsFunction = "PaymentsFunctionName"
)

// DefaultLocalStackEndpoint is LocalStack's edge endpoint on this machine.
const DefaultLocalStackEndpoint = "http://localhost.localstack.cloud:4566"

// DefaultOutputs is the outputs file `make localstack-deploy` writes,
// relative to the repository root.
const DefaultOutputs = "localstack/outputs.json"

// Config is the suite's target configuration.
type Config struct {
	Target Target
	// LocalStack only:
	Endpoint         string // LocalStack edge URL
	OutputsFile      string // where the stack outputs were read from
	APIURL           string // payments API base URL, ending in "/"; "" = no HTTP API deployed
	PaymentsFunction string // with APIURL "": the function to invoke (PaymentsFunctionName output); "" = by name prefix
	QueueURL         string // orders queue
	DLQURL           string // orders dead-letter queue
	PaymentsTable    string // "" = discover by the CDK's name prefix
	OrdersTable      string // "" = discover by the CDK's name prefix
}

// ConfigFromEnv reads the configuration through getenv (os.Getenv in the
// suite). root is the repository root, against which a relative outputs
// path is resolved. For the LocalStack target it reads the outputs file.
func ConfigFromEnv(getenv func(string) string, root string) (Config, error) {
	t := Target(strings.ToLower(strings.TrimSpace(getenv(EnvTarget))))
	switch t {
	case "", TargetEmbedded:
		return Config{Target: TargetEmbedded}, nil
	case TargetLocalStack:
	case TargetAWS:
		return awsConfig(getenv, root)
	default:
		return Config{}, fmt.Errorf("e2estack: %s=%q: want %q (default), %q or %q", EnvTarget, getenv(EnvTarget), TargetEmbedded, TargetLocalStack, TargetAWS)
	}
	c := Config{
		Target:        TargetLocalStack,
		Endpoint:      strings.TrimRight(strings.TrimSpace(getenv(EnvEndpoint)), "/"),
		OutputsFile:   strings.TrimSpace(getenv(EnvOutputs)),
		PaymentsTable: strings.TrimSpace(getenv(EnvPaymentsTable)),
		OrdersTable:   strings.TrimSpace(getenv(EnvOrdersTable)),
	}
	if c.Endpoint == "" {
		c.Endpoint = DefaultLocalStackEndpoint
	}
	if u, err := url.Parse(c.Endpoint); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Config{}, fmt.Errorf("e2estack: %s=%q is not an http(s) URL", EnvEndpoint, c.Endpoint)
	}
	if c.OutputsFile == "" {
		c.OutputsFile = DefaultOutputs
	}
	if !filepath.IsAbs(c.OutputsFile) {
		c.OutputsFile = filepath.Join(root, c.OutputsFile)
	}
	b, err := os.ReadFile(c.OutputsFile)
	if err != nil {
		return Config{}, fmt.Errorf("e2estack: read the stack outputs (run `make localstack-deploy` first, or set %s): %w", EnvOutputs, err)
	}
	out, err := ReadOutputs(b)
	if err != nil {
		return Config{}, fmt.Errorf("e2estack: %s: %w", c.OutputsFile, err)
	}
	// LocalStack's community image has no API Gateway v2 (HTTP APIs are a
	// paid feature): without an ApiUrl output the suite plays the HTTP API
	// itself in front of the deployed function (see LambdaInvoker), named by
	// the PaymentsFunctionName output.
	if _, ok := out[PaymentsStack]; !ok {
		return Config{}, fmt.Errorf("e2estack: %s: no outputs for stack %s; was it deployed?", c.OutputsFile, PaymentsStack)
	}
	if api := strings.TrimSpace(out[PaymentsStack][OutputAPIURL]); api != "" {
		if c.APIURL, err = LocalStackAPIURL(api, c.Endpoint); err != nil {
			return Config{}, err
		}
	} else {
		c.PaymentsFunction = strings.TrimSpace(out[PaymentsStack][OutputPaymentsFunction])
	}
	if c.QueueURL, err = out.Get(OrdersStack, OutputQueue); err != nil {
		return Config{}, err
	}
	if c.DLQURL, err = out.Get(OrdersStack, OutputDLQ); err != nil {
		return Config{}, err
	}
	return c, nil
}

// awsConfig is the AWS target's configuration: the outputs file (required:
// `make aws-verify` writes it, keyed by the stack ids without the run's
// suffix) and the two tables (required: their names are not outputs).
func awsConfig(getenv func(string) string, root string) (Config, error) {
	c := Config{
		Target:        TargetAWS,
		OutputsFile:   strings.TrimSpace(getenv(EnvOutputs)),
		PaymentsTable: strings.TrimSpace(getenv(EnvPaymentsTable)),
		OrdersTable:   strings.TrimSpace(getenv(EnvOrdersTable)),
	}
	if c.OutputsFile == "" || c.PaymentsTable == "" || c.OrdersTable == "" {
		return Config{}, fmt.Errorf("e2estack: the %s target needs %s, %s and %s (make aws-verify sets them)", TargetAWS, EnvOutputs, EnvPaymentsTable, EnvOrdersTable)
	}
	if !filepath.IsAbs(c.OutputsFile) {
		c.OutputsFile = filepath.Join(root, c.OutputsFile)
	}
	b, err := os.ReadFile(c.OutputsFile)
	if err != nil {
		return Config{}, fmt.Errorf("e2estack: read the stack outputs: %w", err)
	}
	out, err := ReadOutputs(b)
	if err != nil {
		return Config{}, fmt.Errorf("e2estack: %s: %w", c.OutputsFile, err)
	}
	if c.APIURL, err = out.Get(PaymentsStack, OutputAPIURL); err != nil {
		return Config{}, err
	}
	c.APIURL = strings.TrimSuffix(c.APIURL, "/") + "/"
	if c.QueueURL, err = out.Get(OrdersStack, OutputQueue); err != nil {
		return Config{}, err
	}
	if c.DLQURL, err = out.Get(OrdersStack, OutputDLQ); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Outputs are CloudFormation stack outputs by stack, then output name: the
// JSON document `cdk deploy --outputs-file` writes.
type Outputs map[string]map[string]string

// ReadOutputs parses a `cdk deploy --outputs-file` document.
func ReadOutputs(doc []byte) (Outputs, error) {
	var raw map[string]map[string]any
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("not a cdk outputs file (want {\"stack\": {\"Output\": \"value\"}}): %w", err)
	}
	out := Outputs{}
	for stack, outputs := range raw {
		out[stack] = map[string]string{}
		for k, v := range outputs {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("output %s.%s is a %T, want a string", stack, k, v)
			}
			out[stack][k] = s
		}
	}
	return out, nil
}

// Get returns one output, or an error naming what is there instead.
func (o Outputs) Get(stack, name string) (string, error) {
	outs, ok := o[stack]
	if !ok {
		return "", fmt.Errorf("e2estack: no outputs for stack %s (stacks: %s); was it deployed?", stack, strings.Join(keys(o), ", "))
	}
	v := strings.TrimSpace(outs[name])
	if v == "" {
		return "", fmt.Errorf("e2estack: stack %s has no output %s (outputs: %s)", stack, name, strings.Join(keys(outs), ", "))
	}
	return v, nil
}

// LocalStackAPIURL turns an HTTP API's URL as CloudFormation renders it
// (https://<id>.execute-api.<region>.amazonaws.com/ on AWS, or already a
// LocalStack host) into the URL LocalStack serves it on:
// <scheme>://<id>.execute-api.localhost.localstack.cloud:<port>/, with the
// endpoint's scheme and port. The result ends in "/".
func LocalStackAPIURL(raw, endpoint string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("e2estack: API URL %q is not a URL", raw)
	}
	ep, err := url.Parse(endpoint)
	if err != nil || ep.Host == "" {
		return "", fmt.Errorf("e2estack: endpoint %q is not a URL", endpoint)
	}
	host := u.Hostname()
	i := strings.Index(host, ".execute-api.")
	if i <= 0 {
		return "", fmt.Errorf("e2estack: API URL %q has no <id>.execute-api host", raw)
	}
	id := host[:i]
	port := ep.Port()
	if port == "" {
		port = "4566"
	}
	path := strings.TrimSuffix(u.Path, "/") + "/"
	return fmt.Sprintf("%s://%s.execute-api.localhost.localstack.cloud:%s%s", ep.Scheme, id, port, path), nil
}

// FindTable returns the one table (or function: the CDK names both alike)
// whose name starts with the CDK's name prefix for a construct
// (<stack>-<logicalId>), or an error if none or several do.
func FindTable(names []string, stack, logicalID string) (string, error) {
	prefix := stack + "-" + logicalID
	var found []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("e2estack: no resource named %s*", prefix)
	}
	sort.Strings(found)
	return "", fmt.Errorf("e2estack: several resources named %s*: %s", prefix, strings.Join(found, ", "))
}

// ErrNoFaults is what scenarios that need the harness's fault injection
// report on a target without it.
var ErrNoFaults = errors.New("e2estack: this scenario injects faults through the embedded stack's DynamoDB endpoint and emulator; LocalStack runs the release functions in its own containers")

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MaxReceiveCount reads maxReceiveCount from a queue's RedrivePolicy
// attribute (SQS writes it as a number, some emulators as a string).
func MaxReceiveCount(redrivePolicy string) (int, error) {
	if strings.TrimSpace(redrivePolicy) == "" {
		return 0, errors.New("e2estack: the queue has no redrive policy (no dead-letter queue)")
	}
	var p struct {
		MaxReceiveCount json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(redrivePolicy), &p); err != nil {
		return 0, fmt.Errorf("e2estack: RedrivePolicy %q: %w", redrivePolicy, err)
	}
	raw := strings.Trim(string(p.MaxReceiveCount), `"`)
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("e2estack: RedrivePolicy %q: maxReceiveCount must be a positive integer", redrivePolicy)
	}
	return n, nil
}
