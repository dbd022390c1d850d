package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
)

// TagKey is the tag every stack of a run carries (CloudFormation passes
// stack tags on to the resources it creates); its value is the run id.
// `make aws-clean` finds leftovers by it.
const TagKey = "lambdaidem:verify-run"

// List prices used for the estimate: US East (N. Virginia), read from the
// services' pricing pages on 2026-12-01. A Region's prices differ by a few
// per cent; the free tier is not counted.
const (
	pricePerMWriteUnits = 0.625 // DynamoDB on-demand, per million write request units
	pricePerMReadUnits  = 0.125 // DynamoDB on-demand, per million read request units
	pricePerMInvokes    = 0.20  // Lambda requests, per million
	pricePerGBSecond    = 0.0000133334
	pricePerMHTTPAPI    = 1.00 // API Gateway HTTP API, per million requests
	pricePerMSQS        = 0.40 // SQS standard, per million requests
	pricePerGBLogs      = 0.50 // CloudWatch Logs ingestion, per GB
)

// budget is an upper bound of what one check consumes.
type budget struct {
	WriteUnits, ReadUnits float64 // DynamoDB request units
	Invocations           int     // Lambda invocations (128 MB, ≤ 1 s each)
	HTTPRequests          int     // through API Gateway
	SQSRequests           int
	LogMB                 float64
	Time                  time.Duration // wall clock, at most (the check's own bound)
}

func (b budget) add(c budget) budget {
	return budget{b.WriteUnits + c.WriteUnits, b.ReadUnits + c.ReadUnits, b.Invocations + c.Invocations,
		b.HTTPRequests + c.HTTPRequests, b.SQSRequests + c.SQSRequests, b.LogMB + c.LogMB, b.Time + c.Time}
}

// dollars is the list price of b.
func (b budget) dollars() float64 {
	const gbSecondsPerInvoke = 0.125 * 1.0 // 128 MB for at most a second
	return b.WriteUnits/1e6*pricePerMWriteUnits + b.ReadUnits/1e6*pricePerMReadUnits +
		float64(b.Invocations)/1e6*pricePerMInvokes + float64(b.Invocations)*gbSecondsPerInvoke*pricePerGBSecond +
		float64(b.HTTPRequests)/1e6*pricePerMHTTPAPI + float64(b.SQSRequests)/1e6*pricePerMSQS +
		b.LogMB/1024*pricePerGBLogs
}

// Deployment and teardown times, from CloudFormation's usual pace for
// these resource types (an HTTP API, two functions, a queue, a dozen
// tables): generous upper bounds, printed before anything is created.
const (
	deployTime   = 8 * time.Minute
	teardownTime = 6 * time.Minute
)

// plan is what a run will create and do, printed before it starts.
type plan struct {
	RunID   string
	Region  string
	Account string // the access key, shortened; never a secret
	Stacks  []string
	Tables  []string // logical table roles in the verify stack
	Checks  []*check
	Local   bool
	// CDKCLI is the CDK CLI command the deployment runs (AWS only).
	CDKCLI string
	// Endpoints are the AWS_ENDPOINT_URL* variables the run was asked to
	// test (-endpoint-ok) instead of AWS.
	Endpoints []string
}

// newRunID returns a short random run id: lower-case, valid in stack
// names, table names and tag values.
func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "v" + hex.EncodeToString(b[:])
}

// stackNames are the CloudFormation stacks of one run.
func stackNames(runID string) []string {
	return []string{"lambdaidem-payments-" + runID, "lambdaidem-orders-" + runID, "lambdaidem-verify-" + runID}
}

// total is the sum of the checks' budgets.
func (p *plan) total() budget {
	var b budget
	for _, c := range p.Checks {
		b = b.add(c.Budget)
	}
	return b
}

// print writes what the run will create, its estimated cost and time.
func (p *plan) print(w io.Writer) {
	t := p.total()
	if p.Local {
		fmt.Fprintf(w, "awsverify %s: LOCAL mode: every check against the DynamoDB test endpoint (ddbtest: %s) and the Lambda Runtime Interface Emulator; nothing is created on AWS.\n", p.RunID, localBackend())
	} else {
		fmt.Fprintf(w, "awsverify %s will create, in Region %s with credentials %s:\n", p.RunID, p.Region, p.Account)
		if len(p.Endpoints) > 0 {
			fmt.Fprintf(w, "  (NOT on AWS: on the endpoint of %s, as -endpoint-ok asked)\n", strings.Join(p.Endpoints, ", "))
		}
		for _, s := range p.Stacks {
			fmt.Fprintf(w, "  - CloudFormation stack %s, tagged %s=%s\n", s, TagKey, p.RunID)
		}
		fmt.Fprintf(w, "    (the payments HTTP API and function, the orders queue, dead-letter queue and function, their tables,\n")
		fmt.Fprintf(w, "     and %d on-demand tables for the checks: %s)\n", len(p.Tables), strings.Join(p.Tables, ", "))
		fmt.Fprintf(w, "  It needs a CDK-bootstrapped account and Region (npx aws-cdk bootstrap), and Node.js for the CDK CLI.\n")
	}
	fmt.Fprintf(w, "Checks, each bounded:\n")
	for _, c := range p.Checks {
		fmt.Fprintf(w, "  - %-12s %s (at most %v)\n", c.Name, c.Bound, c.Budget.Time)
	}
	if p.Local {
		fmt.Fprintf(w, "Estimated time: at most %v.\n", t.Time.Round(time.Second))
		return
	}
	fmt.Fprintf(w, "Estimated cost: at most $%.2f at US East list prices (%.0f write and %.0f read request units, %d Lambda invocations,\n",
		max(0.01, t.dollars()), t.WriteUnits, t.ReadUnits, t.Invocations)
	fmt.Fprintf(w, "  %d HTTP API requests, %d SQS requests, %.0f MB of logs; free tier not counted; resources exist for the run only).\n",
		t.HTTPRequests, t.SQSRequests, t.LogMB)
	fmt.Fprintf(w, "Estimated time: deploy up to %v, checks up to %v, teardown up to %v.\n", deployTime, t.Time.Round(time.Second), teardownTime)
	fmt.Fprintf(w, "Everything is torn down at the end, after a failure or an interrupt too; `make aws-clean` removes leftovers by tag.\n")
}
