//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// reply is what an HTTP client got.
type reply struct {
	Status int
	Header http.Header
	Body   string
}

func (r reply) replayed() bool { return r.Header.Get("Idempotent-Replayed") == "true" }

func (r reply) String() string {
	return fmt.Sprintf("%d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
}

// postPayment sends POST /payments with an Idempotency-Key.
func (s *stack) postPayment(t *testing.T, base, key, body string) reply {
	t.Helper()
	r, err := s.tryPost(t.Context(), base, key, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (s *stack) tryPost(ctx context.Context, base, key, body string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/payments", strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := s.http.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("POST /payments: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return reply{}, err
	}
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}, nil
}

// paymentBody is a valid payment request with a reference unique to the
// scenario, by which its payments are counted.
func paymentBody(reference string, amount int) string {
	return fmt.Sprintf(`{"amount": %d, "currency": "EUR", "reference": %q}`, amount, reference)
}

// unique returns prefix plus random hex, so scenarios never share keys.
func unique(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// itemsWhere scans a table (bounded) and returns the items whose string
// attribute attr equals value.
func itemsWhere(t *testing.T, c *dynamodb.Client, table, attr, value string) []map[string]ddbtypes.AttributeValue {
	t.Helper()
	var out []map[string]ddbtypes.AttributeValue
	var start map[string]ddbtypes.AttributeValue
	for range 200 {
		page, err := c.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(table), ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		for _, it := range page.Items {
			if s, ok := it[attr].(*ddbtypes.AttributeValueMemberS); ok && s.Value == value {
				out = append(out, it)
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		start = page.LastEvaluatedKey
	}
	t.Fatalf("scan %s: more than 200 pages", table)
	return nil
}

// eventually polls cond every interval until it holds or timeout passes.
func eventually(t *testing.T, timeout, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, what)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("cancelled waiting for: %s", what)
		case <-time.After(interval):
		}
	}
}

// retryAfter reads a Retry-After header in seconds (default 1).
func retryAfter(r reply) time.Duration {
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Second
}

// problemType returns the "type" of an application/problem+json body.
func problemType(t *testing.T, r reply) string {
	t.Helper()
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(r.Body), &p); err != nil {
		t.Fatalf("not a problem document: %s", r)
	}
	return p.Type
}

// sendOrder sends one message to the orders queue and returns its id.
func sendOrder(t *testing.T, s *stack, body string) string {
	t.Helper()
	out, err := s.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(s.queueURL), MessageBody: aws.String(body)})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	return aws.ToString(out.MessageId)
}

func orderBody(id string) string {
	return fmt.Sprintf(`{"order_id": %q, "customer": "c-42", "items": [{"sku": "book", "qty": 2}], "total": 3998}`, id)
}

// order reads an order by id with a consistent read.
func order(t *testing.T, s *stack, id string) (map[string]ddbtypes.AttributeValue, bool) {
	t.Helper()
	out, err := s.ddb.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName:      aws.String(s.ordersTable),
		Key:            map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: id}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("get order %s: %v", id, err)
	}
	return out.Item, len(out.Item) > 0
}

// drainDLQ receives (bounded) from the dead-letter queue until it finds a
// message with the body, deleting what it reads; it reports whether found.
func findInDLQ(t *testing.T, s *stack, body string) bool {
	t.Helper()
	out, err := s.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(s.dlqURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
	})
	if err != nil {
		t.Fatalf("receive from the DLQ: %v", err)
	}
	found := false
	for _, m := range out.Messages {
		if aws.ToString(m.Body) == body {
			found = true
			_, _ = s.sqs.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(s.dlqURL), ReceiptHandle: m.ReceiptHandle})
		}
	}
	return found
}
