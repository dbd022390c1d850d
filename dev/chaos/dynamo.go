package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// DynamoOptions configure a [DynamoBackend]. The zero value is valid.
type DynamoOptions struct {
	// URL is a DynamoDB-compatible endpoint to run against. Default: a
	// fresh backend of the world $LAMBDAIDEM_WORLD selects (the in-process
	// minidyn emulator, or a Dynoxide process) behind ddbtest's proxy,
	// served on loopback and closed by Close (ddbtest.Open).
	URL string
	// Departures chooses which emulator departures from DynamoDB the proxy
	// lets through (in-process endpoint only). Default: none.
	Departures ddbtest.Departures
	// NewClient, if set, builds the SDK client over the harness's transport
	// (which plays bursts and lost responses): for an endpoint that needs
	// its own configuration, such as AWS with the caller's credentials and
	// Region. It overrides URL. Default: ddbtest.NewClient for URL.
	NewClient func(transport http.RoundTripper) *dynamodb.Client
	// Table and EffectsTable, if both set, are existing, empty tables to run
	// in (the idempotency table and the business table, both keyed by the
	// string "id"), for example ones created by the CDK construct. Default:
	// fresh tables created on the endpoint.
	Table, EffectsTable string
}

// DynamoBackend is the DynamoDB store over the real AWS SDK. Bursts and
// lost responses are played by an http.RoundTripper under the SDK: a burst
// refuses calls before they leave the client (the SDK retries them, up to
// 3 attempts), a lost response lets the call reach the server, which
// applies it, and answers the SDK with a 500 instead, so the SDK retries a
// call that succeeded.
type DynamoBackend struct {
	opts      DynamoOptions
	endpoint  *ddbtest.Endpoint // nil: the caller's endpoint
	proxy     *ddbtest.Proxy
	client    *dynamodb.Client
	transport *faultTransport
	store     *dynamostore.Store
	table     string
	effects   string
	outbox    string // "" with the caller's tables (DynamoOptions.Table): no outbox
}

// heldBodies are the request bodies the transport asked the proxy to hold
// in flight; the proxy's rule takes each once.
type heldBodies struct {
	mu     sync.Mutex
	bodies map[string]int
}

func (h *heldBodies) add(body []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bodies[string(body)]++
}

func (h *heldBodies) take(body []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bodies[string(body)] == 0 {
		return false
	}
	h.bodies[string(body)]--
	return true
}

// NewDynamoBackend starts the endpoint (unless opts names one) and creates
// the idempotency table and the business table. Close stops the endpoint.
func NewDynamoBackend(ctx context.Context, optFns ...func(*DynamoOptions)) (*DynamoBackend, error) {
	b := &DynamoBackend{}
	for _, fn := range optFns {
		fn(&b.opts)
	}
	url := b.opts.URL
	if url == "" && b.opts.NewClient == nil {
		ep, err := ddbtest.Open(ctx, func(o *ddbtest.ProxyOptions) { o.Departures = b.opts.Departures })
		if err != nil {
			return nil, fmt.Errorf("chaos: %w", err)
		}
		b.endpoint, b.proxy, url = ep, ep.Proxy, ep.URL
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 128, 128
	b.transport = &faultTransport{next: tr}
	if b.proxy != nil {
		// Held claims and commits stay in flight in the proxy, where other
		// writes on the record meet them as DynamoDB's transaction conflicts.
		held := &heldBodies{bodies: map[string]int{}}
		b.transport.held = held
		b.proxy.Inject(ddbtest.Rule{Hold: holdFor, Match: held.take})
	}
	if b.opts.NewClient != nil {
		b.client = b.opts.NewClient(b.transport)
	} else {
		b.client = ddbtest.NewClient(url, func(o *ddbtest.ClientOptions) {
			o.HTTPClient = &http.Client{Transport: b.transport, Timeout: 30 * time.Second}
		})
	}
	if b.opts.Table != "" && b.opts.EffectsTable != "" {
		b.table, b.effects = b.opts.Table, b.opts.EffectsTable
	} else {
		suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
		b.table, b.effects = "chaos-idempotency-"+suffix, "chaos-effects-"+suffix
		b.outbox = "chaos-outbox-" + suffix
		for _, t := range []string{b.table, b.effects, b.outbox} {
			if err := ddbtest.CreateTable(ctx, b.client, t); err != nil {
				b.Close()
				return nil, err
			}
		}
	}
	store, err := dynamostore.New(b.client, b.table, func(o *dynamostore.Options) { o.OutboxTable = b.outbox })
	if err != nil {
		b.Close()
		return nil, err
	}
	b.store = store
	return b, nil
}

// Close stops the endpoint NewDynamoBackend started, if any.
func (b *DynamoBackend) Close() {
	if b.endpoint != nil {
		b.endpoint.Close()
	}
}

func (b *DynamoBackend) init(bs *bursts) { b.transport.bursts = bs }

func (b *DynamoBackend) Name() string {
	if b.proxy == nil && b.opts.NewClient != nil {
		return "dynamostore (the caller's client)"
	}
	if b.proxy == nil {
		return "dynamostore (" + b.opts.URL + ")"
	}
	backend := b.proxy.Backend().Name
	if b.opts.Departures != (ddbtest.Departures{}) {
		return "dynamostore (" + backend + ", emulator departures)"
	}
	return "dynamostore (" + backend + " behind the fidelity proxy)"
}

func (b *DynamoBackend) Store() lambdaidem.Store { return b.store }
func (b *DynamoBackend) LosesResponses() bool    { return true }

// Conflicts counts the writes the endpoint refused for a transaction
// conflict; 0 for an external endpoint.
func (b *DynamoBackend) Conflicts() int {
	if b.proxy == nil {
		return 0
	}
	return b.proxy.Conflicts()
}

// Calls counts the calls the endpoint received, SDK retries included; nil
// for an external endpoint.
func (b *DynamoBackend) Calls() map[string]int {
	if b.proxy == nil {
		return nil
	}
	return b.proxy.Calls()
}

func (b *DynamoBackend) Stage(ctx context.Context, key, run string) error {
	return dynamostore.Stage(ctx, types.Put{
		TableName: aws.String(b.effects),
		Item: map[string]types.AttributeValue{
			"id":  &types.AttributeValueMemberS{Value: effectID(key, run)},
			"key": &types.AttributeValueMemberS{Value: key},
			"run": &types.AttributeValueMemberS{Value: run},
		},
	})
}

// Snapshot scans both tables through the SDK.
func (b *DynamoBackend) Snapshot(ctx context.Context) (Snapshot, error) {
	s := Snapshot{Effects: map[string][]string{}}
	err := b.scan(ctx, b.effects, func(item map[string]types.AttributeValue) error {
		id, _ := item["id"].(*types.AttributeValueMemberS)
		if id == nil {
			return errors.New("chaos: business item without an id")
		}
		key, run, ok := parseEffectID(id.Value)
		if !ok {
			return fmt.Errorf("chaos: unexpected business item %q", id.Value)
		}
		s.Effects[key] = append(s.Effects[key], run)
		return nil
	})
	if err != nil {
		return s, err
	}
	err = b.scan(ctx, b.table, func(item map[string]types.AttributeValue) error {
		rec := RecordState{Key: attrS(item, "id"), Status: lambdaidem.Status(attrS(item, "status")), Token: attrS(item, "attempt")}
		if ms, ok := attrN(item, "in_progress_expiration"); ok {
			rec.LeaseUntil = time.UnixMilli(ms)
		}
		if sec, ok := attrN(item, "expiration"); ok {
			rec.ExpiresAt = time.Unix(sec, 0)
		}
		s.Records = append(s.Records, rec)
		return nil
	})
	return s, err
}

// scan reads every item of table, page by page (at most 10,000 pages).
func (b *DynamoBackend) scan(ctx context.Context, table string, fn func(map[string]types.AttributeValue) error) error {
	var start map[string]types.AttributeValue
	for page := 0; page < 10_000; page++ {
		out, err := b.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("chaos: scan %s: %w", table, err)
		}
		for _, item := range out.Items {
			if err := fn(item); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		start = out.LastEvaluatedKey
	}
	return fmt.Errorf("chaos: scan %s: too many pages", table)
}

func attrS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func attrN(item map[string]types.AttributeValue, name string) (int64, bool) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}

// faultTransport sits under the SDK and plays bursts, lost responses and
// held calls (which it marks for the proxy to hold in flight).
type faultTransport struct {
	next   http.RoundTripper
	bursts *bursts
	held   *heldBodies // nil: no proxy to hold calls
}

func (t *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	target := req.Header.Get("X-Amz-Target")
	op := target[strings.LastIndex(target, ".")+1:]
	if t.bursts != nil {
		if kind, refused := t.bursts.take(); refused {
			drain(req.Body)
			if kind == ThrottleBurst {
				return errorResponse(req, http.StatusBadRequest, "ThrottlingException", "chaos: rate of requests exceeds the allowed throughput"), nil
			}
			return errorResponse(req, http.StatusInternalServerError, "InternalServerError", "chaos: internal server error"), nil
		}
	}
	p := planFrom(req.Context())
	lose, hold := false, false
	switch op {
	case "UpdateItem": // before the handler: the claim
		lose = p != nil && !p.handlerDone.Load() && p.fire(LostClaimResponse)
		hold = t.held != nil && p != nil && !p.handlerDone.Load() && p.fire(HeldClaim)
	case "PutItem", "TransactWriteItems": // after the handler: the commit
		lose = p != nil && p.handlerDone.Load() && p.fire(LostCommitResponse)
		hold = t.held != nil && p != nil && p.handlerDone.Load() && p.fire(HeldCommit)
	}
	if hold {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		t.held.add(body)
		p.closeHolding()
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || !lose {
		return resp, err
	}
	drain(resp.Body) // the server applied the call; its answer is lost
	return errorResponse(req, http.StatusInternalServerError, "InternalServerError", "chaos: the response was lost"), nil
}

func drain(body io.ReadCloser) {
	if body != nil {
		_, _ = io.Copy(io.Discard, body)
		_ = body.Close()
	}
}

func errorResponse(req *http.Request, status int, code, msg string) *http.Response {
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#` + code + `","message":"` + msg + `"}`
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// Relay publishes the unpublished outbox items through p with
// dynamostore/relay (its GetItem and UpdateItem go through the faulty
// transport too), as the relay does for each record of the outbox table's
// stream; the scan stands in for the stream. It returns the first error.
func (b *DynamoBackend) Relay(ctx context.Context, p outbox.Publisher) error {
	if b.outbox == "" {
		return errors.New("chaos: the caller's tables have no outbox")
	}
	rl, err := relay.New(b.client, b.outbox, p)
	if err != nil {
		return err
	}
	var keys []string
	err = b.scan(ctx, b.outbox, func(item map[string]types.AttributeValue) error {
		if attrS(item, "status") == "PENDING" {
			keys = append(keys, attrS(item, "id"))
		}
		return nil
	})
	for _, k := range keys {
		err = errors.Join(err, rl.Publish(ctx, k))
	}
	return err
}
