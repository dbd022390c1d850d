package outboxaws_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/outboxaws"
)

// envGoaws names the variable that may point at the goaws binary (an
// SNS and SQS emulator, run as a process: .ci/run installs it with go
// install github.com/Admiral-Piett/goaws/app/cmd@v0.4.5 as goaws); else
// goaws on PATH.
const envGoaws = "GOAWS"

// goawsAccount is the account goaws puts in its ARNs and queue URLs.
const goawsAccount = "100010001000"

// goaws is a goaws process with one topic, "orders", subscribed by a raw
// and an enveloped queue, and one queue of its own, "direct".
type goaws struct {
	url string
	sns *sns.Client
	sqs *sqs.Client
}

func startGoaws(t *testing.T) *goaws {
	t.Helper()
	bin := os.Getenv(envGoaws)
	if bin == "" {
		p, err := exec.LookPath("goaws")
		if err != nil {
			t.Skip("goaws not found ($" + envGoaws + " or PATH): the SNS/SQS emulator tests need it (.ci/run installs it)")
		}
		bin = p
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf(`Local:
  Host: 127.0.0.1
  Port: %d
  Region: us-east-1
  AccountId: "%s"
  LogToFile: false
  QueueAttributeDefaults:
    VisibilityTimeout: 30
    ReceiveMessageWaitTimeSeconds: 0
  Queues:
    - Name: direct
  Topics:
    - Name: orders
      Subscriptions:
        - QueueName: orders-raw
          Raw: true
        - QueueName: orders-enveloped
          Raw: false
`, port, goawsAccount)
	if err := os.WriteFile(filepath.Join(dir, "goaws.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", filepath.Join(dir, "goaws.yaml"))
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("goaws exited:\n%s", out.String())
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("goaws did not listen on %s:\n%s", addr, out.String())
		}
	}
	url := "http://" + addr
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
	})
	return &goaws{
		url: url,
		sns: sns.New(sns.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: creds}),
		// goaws v0.4.5 speaks SQS's query protocol only.
		sqs: sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: creds},
			func(o *sqs.Options) { o.Protocol = awsquery.New(schemas.AmazonSQS) }),
	}
}

func (g *goaws) queueURL(name string) string { return g.url + "/" + goawsAccount + "/" + name }

// receive reads one message from the queue, with its attributes.
func (g *goaws) receive(t *testing.T, queue string) sqstypes.Message {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		out, err := g.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(g.queueURL(queue)),
			MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) > 1 {
			t.Fatalf("%s: %d messages, want 1", queue, len(out.Messages))
		}
		if len(out.Messages) == 1 {
			return out.Messages[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: no message", queue)
	return sqstypes.Message{}
}

// TestPublisherUnderGoaws publishes outbox messages with the SDK's clients
// to goaws, an emulator written independently of this repository: an SQS
// message arrives with its body and its id attribute; an SNS message
// reaches a raw subscription as its body with its attributes, and an
// enveloped one as SNS's JSON notification carrying message, subject, topic
// and attributes.
func TestPublisherUnderGoaws(t *testing.T) {
	g := startGoaws(t)
	p, err := outboxaws.New(outboxaws.Options{SQS: g.sqs, SNS: g.sns})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	t.Run("SQS", func(t *testing.T) {
		m := outbox.Message{ID: "msg-sqs-1", Kind: outbox.KindSQS, Target: g.queueURL("direct"), Body: `{"order":"o-1"}`,
			Attributes: map[string]string{outbox.IDAttribute: "msg-sqs-1", "event": "accepted"}}
		if err := p.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
		got := g.receive(t, "direct")
		if aws.ToString(got.Body) != m.Body {
			t.Errorf("body %q, want %q", aws.ToString(got.Body), m.Body)
		}
		for k, v := range m.Attributes {
			if a, ok := got.MessageAttributes[k]; !ok || aws.ToString(a.StringValue) != v || aws.ToString(a.DataType) != "String" {
				t.Errorf("attribute %s: %+v, want String %q", k, a, v)
			}
		}
	})

	t.Run("SNS", func(t *testing.T) {
		topic := "arn:aws:sns:us-east-1:" + goawsAccount + ":orders"
		m := outbox.Message{ID: "msg-sns-1", Kind: outbox.KindSNS, Target: topic, Body: `{"order":"o-2"}`, Subject: "order accepted",
			Attributes: map[string]string{outbox.IDAttribute: "msg-sns-1"}}
		if err := p.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
		raw := g.receive(t, "orders-raw")
		if aws.ToString(raw.Body) != m.Body {
			t.Errorf("raw delivery: body %q, want the message %q", aws.ToString(raw.Body), m.Body)
		}
		if a, ok := raw.MessageAttributes[outbox.IDAttribute]; !ok || aws.ToString(a.StringValue) != m.ID {
			t.Errorf("raw delivery: id attribute %+v, want %q", a, m.ID)
		}
		env := g.receive(t, "orders-enveloped")
		var n struct {
			Type, Message, Subject, TopicArn string
			MessageAttributes                map[string]struct{ Type, Value string }
		}
		if err := json.Unmarshal([]byte(aws.ToString(env.Body)), &n); err != nil {
			t.Fatalf("enveloped delivery is not SNS's JSON notification: %v: %s", err, aws.ToString(env.Body))
		}
		if n.Type != "Notification" || n.Message != m.Body || n.Subject != m.Subject || n.TopicArn != topic {
			t.Errorf("notification %+v", n)
		}
		if a := n.MessageAttributes[outbox.IDAttribute]; a.Type != "String" || a.Value != m.ID {
			t.Errorf("notification's id attribute %+v, want String %q", a, m.ID)
		}
	})
}

// TestGoawsDepartures names where goaws v0.4.5 departs from the Amazon SNS
// API Reference (Publish), checked so that a goaws that changes fails here;
// an SNS FIFO message's deduplication cannot be shown on it:
//   - a publish to a topic that does not exist: AWS answers NotFound;
//     goaws AWS.SimpleNotificationService.NonExistentTopic;
//   - a publish to a FIFO topic without MessageGroupId: AWS refuses it
//     (InvalidParameter: the group is required); goaws accepts it.
func TestGoawsDepartures(t *testing.T) {
	g := startGoaws(t)
	ctx := t.Context()
	_, err := g.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:" + goawsAccount + ":absent"), Message: aws.String("x")})
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "AWS.SimpleNotificationService.NonExistentTopic" {
		t.Errorf("publish to an absent topic: %v; the named departure is AWS.SimpleNotificationService.NonExistentTopic (AWS: NotFound)", err)
	}
	fifo, err := g.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders.fifo"), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.sns.Publish(ctx, &sns.PublishInput{TopicArn: fifo.TopicArn, Message: aws.String("x")}); err != nil {
		t.Errorf("publish to a FIFO topic without a group: %v; the named departure is that goaws accepts it (AWS refuses it)", err)
	}
}
