package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

const queue = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders"

func guard(t *testing.T, s *memstore.Store, clk *testclock.Clock) *lambdaidem.Guard {
	t.Helper()
	g, err := lambdaidem.New(s, func(o *lambdaidem.Options) {
		o.RetryHorizon = time.Hour
		if clk != nil {
			o.Now = clk.Now
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func call(key string) lambdaidem.Call[string] {
	return lambdaidem.Call[string]{Operation: "AcceptOrder", Key: key, Fingerprint: "fp-" + key}
}

// recorder is a Publisher that keeps what it was given, optionally failing.
type recorder struct {
	mu   sync.Mutex
	sent []outbox.Message
	fail func(m outbox.Message, sent bool) error // called before (sent=false) and after (sent=true) recording
}

func (r *recorder) Publish(_ context.Context, m outbox.Message) error {
	if r.fail != nil {
		if err := r.fail(m, false); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.sent = append(r.sent, m)
	r.mu.Unlock()
	if r.fail != nil {
		return r.fail(m, true)
	}
	return nil
}

func (r *recorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, len(r.sent))
	for i, m := range r.sent {
		ids[i] = m.ID
	}
	return ids
}

// TestStageValidates: what a target needs is checked when the message is
// staged; an invalid message is not staged, and the commit goes on without it.
func TestStageValidates(t *testing.T) {
	cases := map[string]func(ctx context.Context) error{
		"SQS without queue": func(ctx context.Context) error { _, err := outbox.Stage(ctx, outbox.SQS{Body: "b"}); return err },
		"SQS without body":  func(ctx context.Context) error { _, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue}); return err },
		"SQS to a FIFO queue": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue + ".fifo", Body: "b"})
			return err
		},
		"SQS delay over 15 minutes": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue, Body: "b", Delay: 16 * time.Minute})
			return err
		},
		"SQS with 10 attributes": func(ctx context.Context) error {
			attrs := map[string]string{}
			for _, c := range "abcdefghij" {
				attrs[string(c)] = "v"
			}
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue, Body: "b", Attributes: attrs})
			return err
		},
		"SQSFIFO with 11 attributes": func(ctx context.Context) error {
			attrs := tenAttributes()
			attrs["k"] = "v"
			_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", GroupID: "g", Body: "b", Attributes: attrs})
			return err
		},
		"SQS with the relay's attribute": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue, Body: "b", Attributes: map[string]string{outbox.IDAttribute: "x"}})
			return err
		},
		"SQSFIFO to a standard queue": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue, GroupID: "g", Body: "b"})
			return err
		},
		"SQSFIFO without group": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", Body: "b"})
			return err
		},
		"SQSFIFO group over 128": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", GroupID: strings.Repeat("g", 129), Body: "b"})
			return err
		},
		"SNS to a FIFO topic": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: "arn:t.fifo", Message: "m"})
			return err
		},
		"SNS subject over 100": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: "arn:t", Message: "m", Subject: strings.Repeat("s", 101)})
			return err
		},
		"SNSFIFO to a standard": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNSFIFO{TopicARN: "arn:t", GroupID: "g", Message: "m"})
			return err
		},
		"SNSFIFO without group": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNSFIFO{TopicARN: "arn:t.fifo", Message: "m"})
			return err
		},
		"EventBridge no source": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{DetailType: "d", Detail: "{}"})
			return err
		},
		"EventBridge no type": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", Detail: "{}"})
			return err
		},
		"EventBridge array": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: "[1]"})
			return err
		},
		"EventBridge relay field": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: `{"lambdaidem-message-id":1}`})
			return err
		},
		"Item without target": func(ctx context.Context) error { _, err := outbox.Stage(ctx, outbox.Item{Body: "b"}); return err },
		"Item negative window": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.Item{Target: "t", Body: "b", Window: -1})
			return err
		},
		"body not UTF-8": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.Item{Target: "t", Body: "\xff"})
			return err
		},
	}
	// What the targets refuse every time, as AWS documents it; each case
	// below failed to be refused before (a message committed that could
	// never be published).
	sqs := func(m outbox.SQS) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			if m.QueueURL == "" {
				m.QueueURL = queue
			}
			_, err := outbox.Stage(ctx, m)
			return err
		}
	}
	snsTopic := "arn:aws:sns:eu-west-1:123456789012:t"
	// SQS SendMessage (API reference): the body allows only #x9 | #xA | #xD
	// | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF; at most
	// 1 MiB with the attributes' names, types and values; message attribute
	// names of A-Za-z0-9 _ - . up to 256 characters, not starting with AWS.
	// or Amazon., no period first, last or twice; names, types and values
	// never empty (SQS Developer Guide, "Amazon SQS message attributes").
	for name, stage := range map[string]func(ctx context.Context) error{
		"SQS body with NUL":                       sqs(outbox.SQS{Body: "a\x00b"}),
		"SQS body with a form feed":               sqs(outbox.SQS{Body: "a\fb"}),
		"SQS body with U+FFFE":                    sqs(outbox.SQS{Body: "a\ufffeb"}),
		"SQS body over 1 MiB":                     sqs(outbox.SQS{Body: strings.Repeat("b", 1<<20)}),
		"SQS attribute with an empty value":       sqs(outbox.SQS{Body: "b", Attributes: map[string]string{"a": ""}}),
		"SQS attribute value with NUL":            sqs(outbox.SQS{Body: "b", Attributes: map[string]string{"a": "\x00"}}),
		"SQS attribute name with a space":         sqs(outbox.SQS{Body: "b", Attributes: map[string]string{"a b": "v"}}),
		"SQS attribute name AWS.":                 sqs(outbox.SQS{Body: "b", Attributes: map[string]string{"aws.x": "v"}}),
		"SQS attribute name Amazon.":              sqs(outbox.SQS{Body: "b", Attributes: map[string]string{"AMAZON.x": "v"}}),
		"SQS attribute name ending in period":     sqs(outbox.SQS{Body: "b", Attributes: map[string]string{"a.": "v"}}),
		"SQS attribute name with two periods":     sqs(outbox.SQS{Body: "b", Attributes: map[string]string{"a..b": "v"}}),
		"SQS attribute name over 256":             sqs(outbox.SQS{Body: "b", Attributes: map[string]string{strings.Repeat("n", 257): "v"}}),
		"SQS attributes over 1 MiB with the body": sqs(outbox.SQS{Body: strings.Repeat("b", 1<<19), Attributes: map[string]string{"a": strings.Repeat("v", 1<<19)}}),
		// MessageGroupId: up to 128 characters, alphanumeric and
		// punctuation (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~): no space.
		"SQSFIFO group with a space": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", GroupID: "a b", Body: "b"})
			return err
		},
		"SNSFIFO group with a non-ASCII letter": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNSFIFO{TopicARN: snsTopic + ".fifo", GroupID: "é", Message: "m"})
			return err
		},
		// SNS Publish (API reference): a subject is UTF-8 text with no line
		// breaks or control characters, less than 100 characters long; a
		// message at most 256 KB (262,144 bytes), attributes included.
		"SNS subject with a line break": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: snsTopic, Message: "m", Subject: "a\nb"})
			return err
		},
		"SNS subject with a tab": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: snsTopic, Message: "m", Subject: "a\tb"})
			return err
		},
		"SNS subject of 100 characters": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: snsTopic, Message: "m", Subject: strings.Repeat("s", 100)})
			return err
		},
		"SNS message over 256 KB": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: snsTopic, Message: strings.Repeat("m", 256<<10)})
			return err
		},
		"SNS attribute with an empty value": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: snsTopic, Message: "m", Attributes: map[string]string{"a": ""}})
			return err
		},
		// EventBridge PutEvents (user guide, "Calculating PutEvents event
		// entry size"): Source, DetailType and Detail in UTF-8 bytes, less
		// than 1 MB since January 2026 (outbox.MaxEventBridgeSize); the
		// relay's id field counts.
		"EventBridge entry of 1 MB with the id": func(ctx context.Context) error {
			// Under 1 MB as staged; over it with the id field added.
			detail := `{"x":"` + strings.Repeat("d", outbox.MaxEventBridgeSize-40) + `"}`
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: detail})
			return err
		},
		// A consumer decoding the detail with encoding/json reads these as
		// the relay's id field.
		// PutEventsRequestEntry (EventBridge API Reference): DetailType
		// is "free-form string, with a maximum of 128 characters"; the
		// Source prefix "aws." is service-reserved (a custom event with
		// it fails NotAuthorizedForSourceException).
		"EventBridge detail type of 129 characters": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: strings.Repeat("d", 129), Detail: "{}"})
			return err
		},
		// PutEvents (EventBridge API Reference): "PutEvents will only
		// process nested JSON up to 1100 levels deep".
		"EventBridge detail nested 1102 levels": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: nested(1102)})
			return err
		},
		"EventBridge source aws.": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "aws.orders", DetailType: "d", Detail: "{}"})
			return err
		},
		"EventBridge relay field in capitals": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: `{"Lambdaidem-Message-Id":"forged"}`})
			return err
		},
		"EventBridge relay field with long s": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: `{"lambdaidem-meſſage-id":"forged","x":1}`})
			return err
		},
		"EventBridge relay field escaped": func(ctx context.Context) error {
			_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: `{"LAMBDAIDEM-MESSAGE-\u0049D":"forged"}`})
			return err
		},
	} {
		cases[name] = stage
	}
	for name, stage := range cases {
		t.Run(name, func(t *testing.T) {
			s := memstore.New()
			_, err := lambdaidem.Do(context.Background(), guard(t, s, nil), call("k"), func(ctx context.Context) (string, error) {
				if err := stage(ctx); !errors.Is(err, outbox.ErrInvalidMessage) {
					t.Errorf("Stage = %v; want ErrInvalidMessage", err)
				}
				return "ok", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Outbox(); len(got) != 0 {
				t.Errorf("an invalid message was committed (%d outbox entries)", len(got))
			}
		})
	}
}

// TestStageAcceptsWhatTargetsAccept: the edges the rules allow are staged:
// a 99-character subject with non-ASCII letters, a FIFO group of 128
// punctuation characters, an SQS body of every allowed range at 1 MiB with
// its id attribute, a detail of 900 KB (over the 256 KB of before 2026).
func TestStageAcceptsWhatTargetsAccept(t *testing.T) {
	s := memstore.New()
	_, err := lambdaidem.Do(context.Background(), guard(t, s, nil), call("k"), func(ctx context.Context) (string, error) {
		body := "\t\n\r \ud7ff\ue000\ufffd\U00010000\U0010ffff"
		idAttr := len(outbox.IDAttribute) + len("String") + 64
		for _, st := range []func() error{
			func() error {
				_, err := outbox.Stage(ctx, outbox.SNS{TopicARN: "arn:t", Message: "m", Subject: strings.Repeat("é", 99), Attributes: map[string]string{"a.b-c_D9": "v"}})
				return err
			},
			func() error {
				_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", GroupID: strings.Repeat("!~", 64), Body: body})
				return err
			},
			func() error {
				_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue, Body: body + strings.Repeat("b", 1<<20-len(body)-idAttr)})
				return err
			},
			func() error {
				_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "s", DetailType: "d", Detail: `{"x":"` + strings.Repeat("d", 900_000) + `"}`})
				return err
			},
			func() error {
				_, err := outbox.Stage(ctx, outbox.EventBridge{Source: "awsome.orders", DetailType: strings.Repeat("é", 128), Detail: nested(1100)})
				return err
			},
			// A FIFO message carries its id as the deduplication id, not as
			// an attribute: all 10 of the service's attributes are the
			// caller's (SQS Developer Guide, "Amazon SQS message
			// attributes": up to 10 per message).
			func() error {
				_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", GroupID: "g", Body: "b", Attributes: tenAttributes()})
				return err
			},
			func() error {
				_, err := outbox.Stage(ctx, outbox.SNSFIFO{TopicARN: "arn:t.fifo", GroupID: "g", Message: "m", Attributes: tenAttributes()})
				return err
			},
		} {
			if err := st(); err != nil {
				return "", err
			}
		}
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Outbox()[0].Messages); n != 7 {
		t.Fatalf("%d messages staged; want 7", n)
	}
}

// TestStageOutsideInvocation: a message staged outside a wrapped
// invocation fails loudly instead of vanishing.
func TestStageOutsideInvocation(t *testing.T) {
	if _, err := outbox.Stage(context.Background(), outbox.SQS{QueueURL: queue, Body: "b"}); !errors.Is(err, lambdaidem.ErrNoAttempt) {
		t.Fatalf("Stage = %v; want ErrNoAttempt", err)
	}
}

// stageAll stages one message of each kind and returns their ids.
func stageAll(ctx context.Context) ([]string, error) {
	var ids []string
	for _, stage := range []func() (string, error){
		func() (string, error) { return outbox.Stage(ctx, outbox.SQS{QueueURL: queue, Body: "sqs"}) },
		func() (string, error) {
			return outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", GroupID: "order-42", Body: "fifo"})
		},
		func() (string, error) {
			return outbox.Stage(ctx, outbox.SNS{TopicARN: "arn:aws:sns:eu-west-1:1:t", Message: "sns"})
		},
		func() (string, error) {
			return outbox.Stage(ctx, outbox.SNSFIFO{TopicARN: "arn:aws:sns:eu-west-1:1:t.fifo", GroupID: "g", Message: "snsfifo"})
		},
		func() (string, error) {
			return outbox.Stage(ctx, outbox.EventBridge{Source: "orders", DetailType: "OrderAccepted", Detail: ` {"order":"42"}`})
		},
		func() (string, error) { return outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: "item"}) },
	} {
		id, err := stage()
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// TestIDsStableAcrossAttempts: each message's id is the operation key, the
// record's creation time and its position: the same in every attempt under
// one record (here an attempt whose lease lapsed and the takeover that
// commits), different for another operation, and different for a new
// operation under the same key once the record expired (a key reused after
// the retry horizon is a new operation: a consumer that remembers ids
// longer must not drop its messages).
func TestIDsStableAcrossAttempts(t *testing.T) {
	s := memstore.New()
	clk := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	g, err := lambdaidem.New(s, func(o *lambdaidem.Options) {
		o.RetryHorizon = time.Hour
		o.Now = clk.Now
		o.Lease = time.Minute
		o.Renew = lambdaidem.RenewNever
	})
	if err != nil {
		t.Fatal(err)
	}
	var first, second []string
	var opKey string
	var since time.Time
	// The first attempt runs past its lease; the takeover runs and commits
	// meanwhile; the first attempt's own commit is fenced out.
	lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
		first, _ = stageAll(ctx)
		clk.Advance(2 * time.Minute)
		if _, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if a.Number() != 2 {
				t.Errorf("attempt %d; want the takeover, 2", a.Number())
			}
			opKey, since = a.OperationKey(), a.Since()
			ids, err := stageAll(ctx)
			second = ids
			return "ok", err
		}); err != nil {
			t.Fatal(err)
		}
		return "late", nil
	})
	if strings.Join(first, " ") != strings.Join(second, " ") {
		t.Errorf("ids differ across attempts:\n%v\n%v", first, second)
	}
	if !since.Equal(clk.Now().Add(-2 * time.Minute)) {
		t.Errorf("the takeover's Since %v; want the first claim's time", since)
	}
	for i, id := range second {
		if want := outbox.ID(opKey, since, i); id != want || len(id) > 64 {
			t.Errorf("message %d id %q; want %q, at most 64 characters", i, id, want)
		}
	}
	entries := s.Outbox()
	if len(entries) != 1 || len(entries[0].Messages) != 6 {
		t.Fatalf("outbox = %+v; want one entry of 6 messages", entries)
	}
	var other []string
	if _, err := lambdaidem.Do(context.Background(), g, call("k2"), func(ctx context.Context) (string, error) {
		ids, err := stageAll(ctx)
		other = ids
		return "ok", err
	}); err != nil {
		t.Fatal(err)
	}
	if other[0] == second[0] {
		t.Errorf("two operations share the message id %s", other[0])
	}
	// Publish the first operation's messages, let its record expire, and
	// run the key again: a new operation, new ids.
	if _, err := s.Relay(context.Background(), clk.Now(), outbox.PublisherFunc(func(context.Context, outbox.Message) error { return nil })); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour)
	var reused []string
	if _, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
		ids, err := stageAll(ctx)
		reused = ids
		return "ok", err
	}); err != nil {
		t.Fatal(err)
	}
	for i := range reused {
		if reused[i] == second[i] {
			t.Errorf("the key reused after expiry stages message %d under the old operation's id %s", i, reused[i])
		}
	}
}

// TestWhereTheIDGoes: FIFO targets get it as their deduplication id (the
// publisher's job), standard SQS and SNS as a message attribute, and
// EventBridge in its detail, which stays a JSON object.
func TestWhereTheIDGoes(t *testing.T) {
	s := memstore.New()
	if _, err := lambdaidem.Do(context.Background(), guard(t, s, nil), call("k"), func(ctx context.Context) (string, error) {
		_, err := stageAll(ctx)
		return "ok", err
	}); err != nil {
		t.Fatal(err)
	}
	msgs := s.Outbox()[0].Messages
	for _, m := range msgs {
		_, has := m.Attributes[outbox.IDAttribute]
		switch m.Kind {
		case outbox.KindSQS, outbox.KindSNS:
			if m.Attributes[outbox.IDAttribute] != m.ID {
				t.Errorf("%s: attribute %q = %q; want %q", m.Kind, outbox.IDAttribute, m.Attributes[outbox.IDAttribute], m.ID)
			}
		case outbox.KindEventBridge:
			var detail map[string]any
			if err := json.Unmarshal([]byte(m.Body), &detail); err != nil {
				t.Fatalf("detail %s: %v", m.Body, err)
			}
			if detail[outbox.IDAttribute] != m.ID || detail["order"] != "42" {
				t.Errorf("detail = %s", m.Body)
			}
		default:
			if has {
				t.Errorf("%s carries the id attribute; its id goes elsewhere", m.Kind)
			}
		}
		if (m.Kind == outbox.KindSQSFIFO || m.Kind == outbox.KindSNSFIFO) != (m.Window == outbox.FIFOWindow) {
			t.Errorf("%s: window %s", m.Kind, m.Window)
		}
	}
}

// TestCommitIsAtomic: messages are committed with the outcome, or not at
// all: a handler error, a failed business condition and a panic commit
// none; a completed duplicate replays without staging again.
func TestCommitIsAtomic(t *testing.T) {
	s := memstore.New()
	g := guard(t, s, nil)
	stage := func(ctx context.Context) error {
		_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queue, Body: "accepted"})
		return err
	}
	_, err := lambdaidem.Do(context.Background(), g, call("err"), func(ctx context.Context) (string, error) {
		return "", errors.Join(stage(ctx), errors.New("handler failed"))
	})
	if err == nil {
		t.Fatal("want the handler's error")
	}
	_, err = lambdaidem.Do(context.Background(), g, call("cond"), func(ctx context.Context) (string, error) {
		if err := stage(ctx); err != nil {
			return "", err
		}
		return "ok", memstore.Stage(ctx, memstore.Check{Table: "orders", Key: "missing"})
	})
	if !errors.Is(err, lambdaidem.ErrConditionFailed) {
		t.Fatalf("failed condition = %v", err)
	}
	if got := s.Outbox(); len(got) != 0 {
		t.Fatalf("messages committed without their commit: %+v", got)
	}
	for range 3 {
		if _, err := lambdaidem.Do(context.Background(), g, call("ok"), func(ctx context.Context) (string, error) {
			return "ok", stage(ctx)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Outbox(); len(got) != 1 || len(got[0].Messages) != 1 {
		t.Fatalf("outbox after one commit and two replays = %+v", got)
	}
}

// TestMemstoreRelay: the in-memory relay publishes in commit and position
// order; a crash after a publish, before its mark, publishes that message
// again with the same id and nothing else twice.
func TestMemstoreRelay(t *testing.T) {
	s := memstore.New()
	g := guard(t, s, nil)
	for _, key := range []string{"a", "b"} {
		if _, err := lambdaidem.Do(context.Background(), g, call(key), func(ctx context.Context) (string, error) {
			for _, body := range []string{key + "0", key + "1"} {
				if _, err := outbox.Stage(ctx, outbox.Item{Target: "t", Body: body}); err != nil {
					return "", err
				}
			}
			return "ok", nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	crash := errors.New("crash after publish")
	crashed := false
	p := &recorder{fail: func(m outbox.Message, sent bool) error {
		if sent && m.Body == "a1" && !crashed {
			crashed = true
			return crash
		}
		return nil
	}}
	n, err := s.Relay(context.Background(), time.Now(), p)
	if !errors.Is(err, crash) || n != 1 {
		t.Fatalf("Relay = %d, %v; want 1, the crash", n, err)
	}
	if n, err = s.Relay(context.Background(), time.Now(), p); err != nil || n != 3 {
		t.Fatalf("second Relay = %d, %v; want 3, nil", n, err)
	}
	var bodies []string
	for _, m := range p.sent {
		bodies = append(bodies, m.Body)
	}
	if got := strings.Join(bodies, " "); got != "a0 a1 a1 b0 b1" {
		t.Errorf("published %s; want a0 a1 a1 b0 b1", got)
	}
	if ids := p.ids(); ids[1] != ids[2] {
		t.Errorf("the republished message has a new id: %s, %s", ids[1], ids[2])
	}
	for _, e := range s.Outbox() {
		if e.Published != len(e.Messages) {
			t.Errorf("entry %s: %d of %d published", e.Key, e.Published, len(e.Messages))
		}
	}
}

// TestWindowEdges: a target's deduplication window, at its edge on the
// manual clock. The first dispatch is always allowed; a redispatch until
// one instant before the window has passed; never at or after it.
func TestWindowEdges(t *testing.T) {
	first := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fifo := outbox.Message{ID: "op-0", Window: outbox.FIFOWindow}
	cases := []struct {
		name  string
		m     outbox.Message
		first time.Time
		now   time.Time
		ok    bool
	}{
		{"first dispatch, long after commit", fifo, time.Time{}, first.Add(48 * time.Hour), true},
		{"redispatch at once", fifo, first, first, true},
		{"redispatch 1ms before the edge", fifo, first, first.Add(outbox.FIFOWindow - time.Millisecond), true},
		{"redispatch at the edge", fifo, first, first.Add(outbox.FIFOWindow), false},
		{"redispatch after the edge", fifo, first, first.Add(outbox.FIFOWindow + time.Millisecond), false},
		{"no window: consumer dedupes", outbox.Message{ID: "op-0"}, first, first.Add(48 * time.Hour), true},
	}
	for _, c := range cases {
		err := outbox.Window(c.m, c.first, c.now)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, outbox.ErrWindowPassed) {
			t.Errorf("%s: Window = %v; want ok=%v", c.name, err, c.ok)
		}
	}
}

// TestMemstoreRelayRefusesPastWindow: a FIFO message whose first dispatch
// failed is sent again within five minutes, and never after: the relay
// sets the entry aside saying why, the message stays unpublished, and the
// entry no longer blocks its key.
func TestMemstoreRelayRefusesPastWindow(t *testing.T) {
	clk := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := memstore.New()
	if _, err := lambdaidem.Do(context.Background(), guard(t, s, clk), call("k"), func(ctx context.Context) (string, error) {
		_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: queue + ".fifo", GroupID: "g", Body: "b"})
		return "ok", err
	}); err != nil {
		t.Fatal(err)
	}
	lost := errors.New("response lost")
	p := &recorder{fail: func(_ outbox.Message, sent bool) error {
		if sent {
			return lost
		}
		return nil
	}}
	if _, err := s.Relay(context.Background(), clk.Now(), p); !errors.Is(err, lost) {
		t.Fatal(err)
	}
	clk.Advance(outbox.FIFOWindow - time.Millisecond)
	if _, err := s.Relay(context.Background(), clk.Now(), p); !errors.Is(err, lost) {
		t.Fatalf("redispatch inside the window = %v; want it sent (and lost again)", err)
	}
	clk.Advance(time.Millisecond)
	p.fail = nil
	if _, err := s.Relay(context.Background(), clk.Now(), p); err != nil {
		t.Fatalf("redispatch at the window's edge = %v; want the entry set aside", err)
	}
	e := s.Outbox()[0]
	if len(p.sent) != 2 || e.Published != 0 || !strings.Contains(e.SetAside, "deduplicates for 5m0s") {
		t.Errorf("sent %d times, %d published, set aside %q; want 2, 0, and ErrWindowPassed saying why", len(p.sent), e.Published, e.SetAside)
	}
	// A set-aside entry blocks nothing: the key, reused after expiry,
	// commits, and the relay publishes the new entry.
	clk.Advance(2 * time.Hour)
	if _, err := lambdaidem.Do(context.Background(), guard(t, s, clk), call("k"), func(ctx context.Context) (string, error) {
		_, err := outbox.Stage(ctx, outbox.Item{Target: "t", Body: "again"})
		return "ok", err
	}); err != nil {
		t.Fatalf("a later commit under the key = %v", err)
	}
	if n, err := s.Relay(context.Background(), clk.Now(), p); n != 1 || err != nil {
		t.Fatalf("Relay = %d, %v; want the new message published", n, err)
	}
	if got := s.Outbox(); len(got) != 2 || got[0].SetAside == "" {
		t.Errorf("outbox %+v; want the set-aside entry kept beside the new one", got)
	}
}

// TestMemstoreRelaySetsAsideWhatIsRefused: a message its target refuses
// every time (outbox.ErrUnpublishable) sets its entry aside; the relay
// goes on with the next entry.
func TestMemstoreRelaySetsAsideWhatIsRefused(t *testing.T) {
	s := memstore.New()
	g := guard(t, s, nil)
	for _, k := range []string{"a", "b"} {
		if _, err := lambdaidem.Do(context.Background(), g, call(k), func(ctx context.Context) (string, error) {
			_, err := outbox.Stage(ctx, outbox.Item{Target: k, Body: "b"})
			return "ok", err
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := &recorder{fail: func(m outbox.Message, sent bool) error {
		if m.Target == "a" && !sent {
			return fmt.Errorf("no such target: %w", outbox.ErrUnpublishable)
		}
		return nil
	}}
	if n, err := s.Relay(context.Background(), time.Now(), p); n != 1 || err != nil {
		t.Fatalf("Relay = %d, %v; want b published", n, err)
	}
	got := s.Outbox()
	if !strings.Contains(got[0].SetAside, "no such target") || got[1].Published != 1 {
		t.Errorf("outbox %+v; want a set aside, b published", got)
	}
}

// TestUnpublishedNeverOverwritten: a commit under a record key whose
// earlier messages are still unpublished (its record expired and the key
// ran again before the relay caught up) fails as in progress
// (ErrInProgress: a retry later commits) rather than lose them, never as
// the caller's business condition.
func TestUnpublishedNeverOverwritten(t *testing.T) {
	clk := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := memstore.New()
	g := guard(t, s, clk)
	run := func() error {
		_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
			_, err := outbox.Stage(ctx, outbox.Item{Target: "t", Body: "b"})
			return "ok", err
		})
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour) // past the retry horizon
	if err := run(); !errors.Is(err, lambdaidem.ErrInProgress) || errors.Is(err, lambdaidem.ErrConditionFailed) {
		t.Fatalf("second run over an unpublished entry = %v; want ErrInProgress, not a business condition", err)
	}
	if _, err := s.Relay(context.Background(), clk.Now(), &recorder{}); err != nil {
		t.Fatal(err)
	}
	if err := run(); err != nil {
		t.Fatalf("second run over a published entry = %v", err)
	}
}

// tenAttributes is as many message attributes as SQS and SNS FIFO
// messages carry.
func tenAttributes() map[string]string {
	attrs := map[string]string{}
	for i := range 10 {
		attrs[fmt.Sprintf("a%d", i)] = "v"
	}
	return attrs
}

// nested is a JSON object nested levels deep, the outermost counted, with
// brackets inside a string (after an escaped quote) that do not count:
// {"a":{"a":…{"s":"\"[[{{"}…}}.
func nested(levels int) string {
	return strings.Repeat(`{"a":`, levels-1) + `{"s":"\"[[{{"}` + strings.Repeat("}", levels-1)
}
