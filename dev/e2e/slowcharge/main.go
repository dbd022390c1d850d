// Command slowcharge is a test function for the end-to-end suite: a payment
// whose card charge, at a provider on loopback, can outlive the function's
// timeout, because the charge call ignores the invocation's context (as
// code past its deadline does on Lambda Managed Instances, which do not
// stop it). It marks the record before the charge (BeginExternal), stages
// the payment item, and reconciles an unresolved record by asking the
// provider.
//
// Environment:
//
//	IDEMPOTENCY_TABLE, PAYMENTS_TABLE  the tables (required)
//	PROVIDER_URL                       the provider: POST /charge?key=K, GET /status?key=K (required)
//	LEASE_MARGIN                       lambdaidem.Options.LeaseMargin, a Go duration (default 5s)
//	AWS_ENDPOINT_URL_DYNAMODB          honoured by the AWS SDK
//
// Event: {"key": "…", "amount": 123}. Result: {"status": "paid" |
// "in-progress" | "unknown", "payment": "…"}.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Event is a payment request.
type Event struct {
	Key    string `json:"key"`
	Amount int    `json:"amount"`
}

// Result is what the function answers.
type Result struct {
	Status  string `json:"status"`
	Payment string `json:"payment,omitempty"`
}

type function struct {
	guard    *lambdaidem.Guard
	payments string
	provider string
	http     *http.Client
}

func main() {
	f, err := setup(context.Background())
	if err != nil {
		log.Fatalf("slowcharge: %v", err)
	}
	lambda.Start(f.handle)
}

func setup(ctx context.Context) (*function, error) {
	idem, payments, provider := os.Getenv("IDEMPOTENCY_TABLE"), os.Getenv("PAYMENTS_TABLE"), os.Getenv("PROVIDER_URL")
	if idem == "" || payments == "" || provider == "" {
		return nil, errors.New("IDEMPOTENCY_TABLE, PAYMENTS_TABLE and PROVIDER_URL are required")
	}
	margin := 5 * time.Second
	if v := os.Getenv("LEASE_MARGIN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("LEASE_MARGIN=%q is not a positive duration", v)
		}
		margin = d
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	store, err := dynamostore.New(dynamodb.NewFromConfig(cfg), idem)
	if err != nil {
		return nil, err
	}
	// Renew is left at RenewAuto: on Managed Instances the Guard renews.
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.LeaseMargin = margin })
	if err != nil {
		return nil, err
	}
	log.Printf("slowcharge: lease renewal %v", guard.Options().Renew)
	return &function{guard: guard, payments: payments, provider: provider, http: &http.Client{}}, nil
}

func (f *function) handle(ctx context.Context, e Event) (Result, error) {
	fp, err := lambdaidem.Fingerprint(e)
	if err != nil {
		return Result{}, err
	}
	call := lambdaidem.Call[Result]{Operation: "SlowCharge", Key: e.Key, Fingerprint: fp, Reconcile: f.reconcile}
	r, err := lambdaidem.Do(ctx, f.guard, call, func(ctx context.Context) (Result, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return Result{}, err
		}
		// The charge ignores ctx: it goes on past the deadline.
		if err := f.post(context.WithoutCancel(ctx), "/charge", a.OperationKey()); err != nil {
			return Result{}, err
		}
		err := dynamostore.Stage(ctx, types.Put{TableName: aws.String(f.payments), Item: map[string]types.AttributeValue{
			"id":     &types.AttributeValueMemberS{Value: e.Key},
			"amount": &types.AttributeValueMemberN{Value: strconv.Itoa(e.Amount)},
		}})
		return Result{Status: "paid", Payment: e.Key}, err
	})
	switch {
	case errors.Is(err, lambdaidem.ErrInProgress):
		return Result{Status: "in-progress"}, nil
	case errors.Is(err, lambdaidem.ErrOutcomeUnknown):
		return Result{Status: "unknown"}, nil
	}
	return r, err
}

// reconcile asks the provider whether the charge went through. It is the
// naive answer (no record means "not done") that is safe only because the
// core never asks while the owner may still be running.
func (f *function) reconcile(ctx context.Context, u lambdaidem.Unknown) (Result, bool, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.provider+"/status?key="+url.QueryEscape(u.OperationKey), nil)
	resp, err := f.http.Do(req)
	if err != nil {
		return Result{}, false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	switch string(body) {
	case "charged":
		return Result{Status: "paid"}, true, nil
	case "none":
		return Result{}, false, nil
	}
	return Result{}, false, fmt.Errorf("provider status %d %q", resp.StatusCode, body)
}

func (f *function) post(ctx context.Context, path, key string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.provider+path+"?key="+url.QueryEscape(key), nil)
	resp, err := f.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("provider: %s", resp.Status)
	}
	return nil
}
