package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
)

// outboxClient is what the outbox subcommands call: reads, the scan of
// list, and the conditional update of release and discard.
type outboxClient interface {
	relay.Client
	relay.ScanClient
}

// outboxFlags are the flags of every outbox subcommand.
type outboxFlags struct {
	table, endpoint, region string
}

func (o *outboxFlags) register(fs *flag.FlagSet, e env) {
	fs.StringVar(&o.table, "outbox-table", e.getenv("OUTBOX_TABLE"), "the outbox table (default $OUTBOX_TABLE, as lambdaidemcdk's Outbox sets it)")
	fs.StringVar(&o.endpoint, "endpoint", e.getenv("AWS_ENDPOINT_URL_DYNAMODB"), "DynamoDB endpoint URL (default $AWS_ENDPOINT_URL_DYNAMODB, else AWS's)")
	fs.StringVar(&o.region, "region", "", "AWS Region (default: from the AWS configuration)")
}

func (o *outboxFlags) open(ctx context.Context, e env) (outboxClient, error) {
	if o.table == "" {
		return nil, usagef("no outbox table: pass --outbox-table or set OUTBOX_TABLE")
	}
	c, err := e.client(ctx, o.endpoint, o.region)
	if err != nil {
		return nil, err
	}
	oc, ok := c.(outboxClient)
	if !ok {
		return nil, fmt.Errorf("the DynamoDB client %T cannot update items", c)
	}
	return oc, nil
}

const outboxUsage = `usage: lambdaidem outbox <list|show|release|discard> [flags] [key]

  list     the outbox items the relay set aside (messages it cannot publish), one per line
  show     one set-aside item: the reason, and each message's id, kind, target and size (no bodies)
  release  give a set-aside item back to the relay, which publishes it again from the message that failed
           (--resend: also when that message's deduplication window has passed: its target may deliver it twice)
  discard  give a set-aside item up: its unpublished messages are never sent (--yes to confirm)
`

// outboxCmd runs the outbox subcommands.
func outboxCmd(ctx context.Context, args []string, s streams, e env) error {
	if len(args) == 0 {
		fmt.Fprint(s.err, outboxUsage)
		return usagef("want a subcommand")
	}
	var of outboxFlags
	sub := args[0]
	var resend, yes bool
	fs := newFlagSet("outbox "+sub, s, "[flags] [key]")
	of.register(fs, e)
	positional := "set-aside item key"
	switch sub {
	case "list":
		positional = ""
	case "show":
	case "release":
		fs.BoolVar(&resend, "resend", false, "send the message again even though its target's deduplication window has passed (it may be delivered twice)")
	case "discard":
		fs.BoolVar(&yes, "yes", false, "confirm that the item's unpublished messages are never sent")
	case "-h", "--help", "help":
		fmt.Fprint(s.out, outboxUsage)
		return nil
	default:
		fmt.Fprint(s.err, outboxUsage)
		return usagef("unknown outbox subcommand %q", sub)
	}
	rest, err := parse(fs, args[1:], positional)
	if err != nil {
		return err
	}
	c, err := of.open(ctx, e)
	if err != nil {
		return err
	}
	if sub == "list" {
		items, err := relay.ListSetAside(ctx, c, of.table)
		if err != nil && len(items) == 0 {
			return err
		}
		for _, a := range items {
			kind := ""
			if a.Position < len(a.Messages) {
				kind = string(a.Messages[a.Position].Kind)
			}
			fmt.Fprintf(s.out, "%s\tmessage %d of %d (%s)\tset aside %s\t%s\n", a.Key, a.Position, len(a.Messages), kind,
				a.SetAsideAt.UTC().Format(time.RFC3339), a.Reason)
		}
		fmt.Fprintf(s.err, "%d set-aside outbox items\n", len(items))
		return err // the items it could not read, after those it could
	}
	a, err := relay.ReadSetAside(ctx, c, of.table, rest[0])
	if err != nil {
		if errors.Is(err, relay.ErrNotSetAside) {
			return fmt.Errorf("%w (%v)", errNoAside, err)
		}
		return err
	}
	switch sub {
	case "show":
		return showAside(s, a)
	case "release":
		if err := relay.Release(ctx, c, of.table, a, resend); err != nil {
			return asideChanged(err)
		}
		fmt.Fprintf(s.out, "released %s: the relay publishes it from message %d\n", a.Key, a.Position)
	case "discard":
		if !yes {
			return fmt.Errorf("%w: pass --yes to discard %d unpublished messages of %s", errNotConfirmed, len(a.Messages)-a.Position, a.Key)
		}
		if err := relay.Discard(ctx, c, of.table, a, e.now(), 24*time.Hour); err != nil {
			return asideChanged(err)
		}
		fmt.Fprintf(s.out, "discarded %s: %d messages will never be sent\n", a.Key, len(a.Messages)-a.Position)
	}
	return nil
}

// errNoAside: no set-aside item under the key.
var errNoAside = errors.New("no set-aside outbox item")

// asideChanged maps a release or discard that found the item changed to
// the record-changed exit status.
func asideChanged(err error) error {
	if errors.Is(err, relay.ErrNotSetAside) {
		return fmt.Errorf("%w: %w", errAsideChanged, err)
	}
	return err
}

// errAsideChanged: the item changed since it was read.
var errAsideChanged = errors.New("the item changed since it was read; nothing was done")

// showAside prints a as JSON, message bodies left out.
func showAside(s streams, a relay.Aside) error {
	type message struct {
		ID        string `json:"id"`
		Kind      string `json:"kind"`
		Target    string `json:"target,omitempty"`
		BodyBytes int    `json:"body_bytes"`
		Published bool   `json:"published"`
	}
	v := struct {
		Key          string    `json:"key"`
		Record       string    `json:"record"`
		Reason       string    `json:"reason"`
		Position     int       `json:"position"`
		CommittedAt  time.Time `json:"committed_at"`
		SetAsideAt   time.Time `json:"set_aside_at"`
		DispatchedAt string    `json:"first_dispatch,omitempty"`
		Messages     []message `json:"messages"`
	}{Key: a.Key, Record: a.Record, Reason: a.Reason, Position: a.Position, CommittedAt: a.CommittedAt.UTC(), SetAsideAt: a.SetAsideAt.UTC()}
	if !a.DispatchedAt.IsZero() {
		v.DispatchedAt = a.DispatchedAt.UTC().Format(time.RFC3339Nano)
	}
	for i, m := range a.Messages {
		v.Messages = append(v.Messages, message{ID: m.ID, Kind: string(m.Kind), Target: m.Target, BodyBytes: len(m.Body), Published: i < a.Position})
	}
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var _ outboxClient = (*dynamodb.Client)(nil)
