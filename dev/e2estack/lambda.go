package e2estack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// LambdaInvoker invokes a function deployed to LocalStack through the
// Lambda Invoke API (RequestResponse). LocalStack does not check request
// signatures, so the requests are sent unsigned; this invoker is for
// LocalStack only, never for AWS.
type LambdaInvoker struct {
	// Endpoint is LocalStack's edge URL.
	Endpoint string
	// Function is the function's name or ARN.
	Function string
	// Client sends the requests. Default: one with a 2-minute timeout.
	Client *http.Client
}

// Invoke implements [rie.Invoker]. A function error (the X-Amz-Function-Error
// header) is reported in rie.Invocation.FunctionError.
func (l LambdaInvoker) Invoke(ctx context.Context, payload []byte) (rie.Invocation, error) {
	c := l.Client
	if c == nil {
		c = &http.Client{Timeout: 2 * time.Minute}
	}
	u := l.Endpoint + "/2015-03-31/functions/" + url.PathEscape(l.Function) + "/invocations"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return rie.Invocation{}, err
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return rie.Invocation{}, fmt.Errorf("e2estack: invoke %s: %w", l.Function, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return rie.Invocation{}, err
	}
	if resp.StatusCode >= 300 {
		return rie.Invocation{Status: resp.StatusCode, Payload: body, Duration: time.Since(start)},
			fmt.Errorf("e2estack: invoke %s: %s: %s", l.Function, resp.Status, body)
	}
	if fe := resp.Header.Get("X-Amz-Function-Error"); fe != "" {
		inv := rie.NewInvocation(resp.StatusCode, body, time.Since(start))
		if inv.FunctionError == "" {
			inv.FunctionError = fe
		}
		return inv, nil
	}
	inv := rie.Invocation{Status: resp.StatusCode, Payload: body, Duration: time.Since(start)}
	return inv, nil
}

// PaymentsFunction returns the payments function to put behind the suite's
// own HTTP API when the stack has none: cfg.PaymentsFunction (the stack's
// PaymentsFunctionName output) when set, else the one function LocalStack
// lists under the CDK's name prefix lambdaidem-payments-PaymentsFunction (a
// deployment from before the output existed).
func PaymentsFunction(ctx context.Context, cfg Config) (string, error) {
	if cfg.PaymentsFunction != "" {
		return cfg.PaymentsFunction, nil
	}
	names, err := ListFunctions(ctx, cfg.Endpoint)
	if err != nil {
		return "", err
	}
	return FindTable(names, PaymentsStack, "PaymentsFunction")
}

// ListFunctions returns the names of the functions deployed to LocalStack
// (unsigned ListFunctions calls; LocalStack only).
func ListFunctions(ctx context.Context, endpoint string) ([]string, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	var names []string
	marker := ""
	for range 100 {
		u := endpoint + "/2015-03-31/functions/"
		if marker != "" {
			u += "?Marker=" + url.QueryEscape(marker)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("e2estack: list functions: %w", err)
		}
		var page struct {
			Functions []struct {
				FunctionName string
			}
			NextMarker string
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("e2estack: list functions: %w", err)
		}
		for _, f := range page.Functions {
			names = append(names, f.FunctionName)
		}
		if page.NextMarker == "" {
			return names, nil
		}
		marker = page.NextMarker
	}
	return names, nil
}
