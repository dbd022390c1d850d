package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// provider is a payment provider with its own idempotency keys: it charges
// a key once, and this time its answer to the first charge is lost.
type provider struct {
	mu       sync.Mutex
	charges  map[string]string // operation key → charge id
	timedOut bool
}

var errProviderTimeout = errors.New("payment provider: request timed out")

func (p *provider) charge(opKey string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.charges[opKey]
	if !ok {
		id = fmt.Sprintf("ch_%d", len(p.charges)+1)
		p.charges[opKey] = id
	}
	if !p.timedOut {
		p.timedOut = true
		return "", errProviderTimeout // the charge went through; the answer did not
	}
	return id, nil
}

// receipt is the capture's outcome.
type receipt struct {
	Charge string `json:"charge"`
	Amount int    `json:"amount"`
}

// captureKey is the idempotency key of the capture in the operator step.
const captureKey = "order-1004-capture"

// operator: an external effect whose outcome is unknown, found and settled
// by an operator with the lambdaidem command.
func (d *demo) operator(ctx context.Context) error {
	d.heading("A card charge whose provider answer is lost: the operator's view",
		"a capture job (the library, in this process) charges order 1004 through a payment provider; the provider charges, then times out")
	cli := d.cli
	table := d.emb.PaymentsIdempotencyTable
	store, err := dynamostore.New(d.emb.DynamoDB.Client, table)
	if err != nil {
		return err
	}
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.Namespace = "capture"
		o.Logger = slog.New(slog.DiscardHandler) // the demo narrates
	})
	if err != nil {
		return err
	}
	prov := &provider{charges: map[string]string{}}
	capture := func() (receipt, error) {
		return lambdaidem.Do(ctx, guard, lambdaidem.Call[receipt]{Operation: "CapturePayment", Key: captureKey, Fingerprint: "order-1004:4200EUR"},
			func(ctx context.Context) (receipt, error) {
				a, _ := lambdaidem.AttemptFrom(ctx)
				if err := a.BeginExternal(ctx); err != nil { // marks the record before the charge
					return receipt{}, err
				}
				id, err := prov.charge(a.OperationKey()) // the provider's own idempotency key
				if err != nil {
					return receipt{}, err
				}
				return receipt{Charge: id, Amount: 4200}, nil
			})
	}
	_, err = capture()
	d.say(fmt.Sprintf("  → the capture failed: %v", err))
	d.say("    The charge began, so the record is not released for a blind retry: it is UNKNOWN.")
	_, err = capture()
	d.say(fmt.Sprintf("  A retry → %v", err))
	if !errors.Is(err, lambdaidem.ErrOutcomeUnknown) {
		return d.expect(false, "want the retry refused with ErrOutcomeUnknown", nil)
	}

	d.say("\n  The operator's view (cmd/lambdaidem, pointed at the demo's DynamoDB through AWS_ENDPOINT_URL_DYNAMODB):")
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, cli, args...)
		cmd.Env = append(os.Environ(),
			"AWS_ENDPOINT_URL_DYNAMODB="+d.emb.DynamoDB.URL, "IDEMPOTENCY_TABLE="+table,
			"AWS_ACCESS_KEY_ID=demo", "AWS_SECRET_ACCESS_KEY=demo", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		d.say("    $ lambdaidem " + strings.Join(quoteArgs(args), " "))
		err := cmd.Run()
		for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
			d.say("      " + l)
		}
		return out.String(), err
	}
	if _, err := run("list", "--stuck"); err != nil {
		return err
	}
	key := lambdaidem.RecordKey("capture", "", "CapturePayment", captureKey)
	if _, err := run("key", "--namespace", "capture", "--operation", "CapturePayment", captureKey); err != nil {
		return err
	}
	if _, err := run("show", key); err != nil {
		return err
	}
	charge, ok := prov.charges[lambdaidem.OperationKey(key)]
	d.say(fmt.Sprintf("  The operator asks the provider about the operation key: charge %s exists (found: %v).", charge, ok))
	if _, err := run("resolve", "--done", "--outcome", `{"charge":"`+charge+`","amount":4200}`, key); err != nil {
		return err
	}
	out, err := capture()
	if err != nil {
		return err
	}
	d.say(fmt.Sprintf("  The retry now → charge %s, amount %d: replayed from the record; the provider holds %d charge(s)", out.Charge, out.Amount, len(prov.charges)))
	if _, err := run("list", "--stuck"); err != nil {
		return err
	}
	return d.expect(out.Charge == charge && len(prov.charges) == 1,
		"want the resolved outcome replayed and one charge", nil)
}

// quoteArgs quotes the arguments a shell would need quoted.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, ` {}"'`) {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}
