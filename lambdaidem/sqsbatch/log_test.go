package sqsbatch_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// syncBuffer is a buffer the batch's goroutines may log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Refused and malformed messages get one clear log line each, naming the
// message id and the key hash; never the raw key or the body.
func TestFailuresAreLoggedWithoutKeyOrBody(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	std := loadEvent(t, "standard.json")
	reused := std.Records[1]
	reused.MessageId = "reused-1"
	reused.Body = `{"order_id":"o-1001","customer":"c-secret","items":[],"total":7}`
	malformed := std.Records[2]
	malformed.MessageId = "malformed-1"
	malformed.Body = `{"customer":"c-secret"}`
	s := newSetup(t, newOrders().handle, nil, func(o *sqsbatch.Options) { o.Logger = logger })

	s.invoke(t, events.SQSEvent{Records: []events.SQSMessage{std.Records[0]}})
	s.invoke(t, events.SQSEvent{Records: []events.SQSMessage{reused, malformed}})

	out := buf.String()
	hash := lambdaidem.RecordKey(s.guard.Options().Namespace, "", "CreateOrder", "o-1001")
	for _, want := range []string{
		`"level":"ERROR","msg":"sqsbatch: key reused with a different body; not processed: it fails every delivery and will reach the dead-letter queue`, `"message_id":"reused-1"`, `"key":"` + hash + `"`,
		`"msg":"sqsbatch: malformed message; not processed"`, `"message_id":"malformed-1"`, `no field \"order_id\" in the body`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	for _, secret := range []string{"o-1001", "c-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("log reveals %q:\n%s", secret, out)
		}
	}
}
