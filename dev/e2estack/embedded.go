package e2estack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// The example packages and their routes.
const (
	PaymentsPackage = "./examples/api-gateway"
	OrdersPackage   = "./examples/sqs"
)

// PaymentsRoutes returns the payments API's HTTP API routes (the CDK
// stack's).
func PaymentsRoutes() []string { return []string{"POST /payments", "GET /payments/{id}"} }

// EmbeddedOptions configure [StartEmbedded]. The zero value of each field
// means its documented default.
type EmbeddedOptions struct {
	// RIE is the aws-lambda-rie binary. Required.
	RIE string
	// WorkDir holds the built bootstraps. Required.
	WorkDir string
	// ModuleRoot is the repository root. Default: from [ModuleRoot].
	ModuleRoot string
	// Log receives the functions' and emulators' output. Default: discarded.
	Log io.Writer
	// PaymentsBootstrap and OrdersBootstrap are bootstraps of PaymentsPackage
	// and OrdersPackage built beforehand (by [Build]); each one left empty is
	// built here.
	PaymentsBootstrap, OrdersBootstrap string

	// PaymentsInstances is how many classic emulator instances serve the
	// payments API, as Lambda scales out. Default 4.
	PaymentsInstances int
	// PaymentsTimeout is the payments function's timeout. Default 3s.
	PaymentsTimeout time.Duration
	// ManagedConcurrency > 1 also starts one payments instance in Lambda
	// Managed Instances mode with that many concurrent invocations, behind
	// its own gateway (Embedded.ManagedAPIURL). Default 0: none. See
	// [ManagedInstancesSupported].
	ManagedConcurrency int

	// OrdersTimeout is the orders function's timeout. Default 3s.
	OrdersTimeout time.Duration
	// OrdersVisibility is the orders queue's visibility timeout. Default 2s.
	OrdersVisibility time.Duration
	// OrdersMaxReceiveCount is the orders queue's redrive maxReceiveCount.
	// Default 5.
	OrdersMaxReceiveCount int
	// OrdersBatchSize is the event source mapping's batch size. Default 10.
	OrdersBatchSize int
	// OnBatch observes the orders poller's batches.
	OnBatch func(Batch)

	// IdempotencyTTL is the functions' IDEMPOTENCY_TTL. Default 1h.
	IdempotencyTTL time.Duration
}

// Embedded is the whole embedded stack: DynamoDB and SQS endpoints, the
// payments API behind a gateway, the orders function behind a poller.
type Embedded struct {
	DynamoDB *DynamoDB
	SQS      *SQS

	// Tables of the payments and orders stacks (each stack has its own
	// idempotency table, as in the CDK app).
	PaymentsTable, PaymentsIdempotencyTable string
	OrdersTable, OrdersIdempotencyTable     string

	// Payments is the pool of classic payments instances; APIURL its
	// gateway.
	Payments *rie.Pool
	APIURL   string
	// PaymentsManaged is the Lambda Managed Instances instance (nil unless
	// asked for); ManagedAPIURL its gateway.
	PaymentsManaged *rie.Function
	ManagedAPIURL   string

	// Orders is the orders function; Poller its event source mapping.
	Orders   *rie.Function
	Poller   *Poller
	QueueURL string
	DLQURL   string
	// OrdersVisibility and OrdersMaxReceiveCount are the queue's settings.
	OrdersVisibility      time.Duration
	OrdersMaxReceiveCount int

	closers []func()
}

// StartEmbedded builds the examples, creates the tables and queues, and
// starts every server, function and poller. Close stops them all.
func StartEmbedded(ctx context.Context, o EmbeddedOptions) (_ *Embedded, err error) {
	if o.RIE == "" || o.WorkDir == "" {
		return nil, errors.New("e2estack: StartEmbedded needs RIE and WorkDir")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PaymentsTimeout, 3*time.Second)
	def(&o.OrdersTimeout, 3*time.Second)
	def(&o.OrdersVisibility, 2*time.Second)
	def(&o.IdempotencyTTL, time.Hour)
	if o.PaymentsInstances <= 0 {
		o.PaymentsInstances = 4
	}
	if o.OrdersMaxReceiveCount <= 0 {
		o.OrdersMaxReceiveCount = 5
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	e := &Embedded{
		PaymentsTable: "payments", PaymentsIdempotencyTable: "payments-idempotency",
		OrdersTable: "orders", OrdersIdempotencyTable: "orders-idempotency",
		OrdersVisibility: o.OrdersVisibility, OrdersMaxReceiveCount: o.OrdersMaxReceiveCount,
	}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()

	// Build both bootstraps while the endpoints start.
	type built struct {
		path string
		err  error
	}
	var payBin, ordBin built
	var wg sync.WaitGroup
	payBin.path, ordBin.path = o.PaymentsBootstrap, o.OrdersBootstrap
	if payBin.path == "" {
		wg.Go(func() {
			payBin.path, payBin.err = Build(ctx, BuildOptions{ModuleRoot: o.ModuleRoot, Package: PaymentsPackage, Out: filepath.Join(o.WorkDir, "api-gateway")})
		})
	}
	if ordBin.path == "" {
		wg.Go(func() {
			ordBin.path, ordBin.err = Build(ctx, BuildOptions{ModuleRoot: o.ModuleRoot, Package: OrdersPackage, Out: filepath.Join(o.WorkDir, "sqs")})
		})
	}

	if e.DynamoDB, err = StartDynamoDB(ctx); err != nil {
		wg.Wait()
		return nil, err
	}
	e.closers = append(e.closers, e.DynamoDB.Close)
	if e.SQS, err = StartSQS(ctx); err != nil {
		wg.Wait()
		return nil, err
	}
	e.closers = append(e.closers, e.SQS.Close)
	err = e.createTables(ctx)
	if err == nil {
		err = e.createQueues(ctx)
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if err := errors.Join(payBin.err, ordBin.err); err != nil {
		return nil, err
	}

	common := map[string]string{
		// What Lambda sets (credentials, region) comes from rie.Environment.
		"AWS_ENDPOINT_URL_DYNAMODB": e.DynamoDB.URL,
		"IDEMPOTENCY_TTL":           o.IdempotencyTTL.String(),
	}
	payEnv := with(common, map[string]string{"IDEMPOTENCY_TABLE": e.PaymentsIdempotencyTable, "PAYMENTS_TABLE": e.PaymentsTable})
	ordEnv := with(common, map[string]string{"IDEMPOTENCY_TABLE": e.OrdersIdempotencyTable, "ORDERS_TABLE": e.OrdersTable})

	var payErr, mgdErr, ordErr error
	wg.Go(func() {
		e.Payments, payErr = rie.StartPool(ctx, o.PaymentsInstances, rie.Options{
			RIE: o.RIE, Bootstrap: payBin.path, Name: "payments", Timeout: o.PaymentsTimeout, Env: payEnv, Log: o.Log,
		})
	})
	if o.ManagedConcurrency > 1 {
		wg.Go(func() {
			e.PaymentsManaged, mgdErr = rie.Start(ctx, rie.Options{
				RIE: o.RIE, Bootstrap: payBin.path, Name: "payments-managed", Timeout: o.PaymentsTimeout, Env: payEnv, Log: o.Log,
				MaxConcurrency: o.ManagedConcurrency,
			})
		})
	}
	wg.Go(func() {
		e.Orders, ordErr = rie.Start(ctx, rie.Options{
			RIE: o.RIE, Bootstrap: ordBin.path, Name: "orders", Timeout: o.OrdersTimeout, Env: ordEnv, Log: o.Log,
		})
	})
	wg.Wait()
	if e.Payments != nil {
		e.closers = append(e.closers, e.Payments.Close)
	}
	if e.PaymentsManaged != nil {
		e.closers = append(e.closers, e.PaymentsManaged.Close)
	}
	if e.Orders != nil {
		e.closers = append(e.closers, e.Orders.Close)
	}
	if err := errors.Join(payErr, mgdErr, ordErr); err != nil {
		return nil, err
	}

	gw, err := StartGateway(e.Payments, PaymentsRoutes()...)
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, gw.Close)
	e.APIURL = gw.URL
	if e.PaymentsManaged != nil {
		mgw, err := StartGateway(e.PaymentsManaged, PaymentsRoutes()...)
		if err != nil {
			return nil, err
		}
		e.closers = append(e.closers, mgw.Close)
		e.ManagedAPIURL = mgw.URL
	}

	e.Poller, err = NewPoller(PollerOptions{
		Client: e.SQS.Client, QueueURL: e.QueueURL, Function: e.Orders,
		BatchSize: o.OrdersBatchSize, OnBatch: o.OnBatch,
	})
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, e.Poller.Start(context.WithoutCancel(ctx)))
	return e, nil
}

func (e *Embedded) createTables(ctx context.Context) error {
	c := e.DynamoDB.Client
	for _, t := range []string{e.PaymentsIdempotencyTable, e.OrdersIdempotencyTable} {
		if err := ddbtest.CreateTable(ctx, c, t); err != nil {
			return err
		}
	}
	for _, t := range []string{e.PaymentsTable, e.OrdersTable} {
		if err := CreateBusinessTable(ctx, c, t); err != nil {
			return err
		}
	}
	return nil
}

// createQueues creates the orders queue and its dead-letter queue. goaws
// keeps its queues in package-level state that outlives a stack, so each
// stack's queue names carry a suffix of their own: a second stack in the
// same process (go test -count=2) never meets the first one's messages.
func (e *Embedded) createQueues(ctx context.Context) error {
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	orders, dlq := "orders-"+suffix, "orders-dlq-"+suffix
	var err error
	if e.DLQURL, err = e.SQS.CreateQueue(ctx, QueueSpec{Name: dlq, VisibilityTimeout: 30 * time.Second}); err != nil {
		return err
	}
	e.QueueURL, err = e.SQS.CreateQueue(ctx, QueueSpec{
		Name: orders, VisibilityTimeout: e.OrdersVisibility,
		DeadLetter: dlq, MaxReceiveCount: e.OrdersMaxReceiveCount,
	})
	return err
}

// Close stops everything StartEmbedded started, last first.
func (e *Embedded) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
}

// CreateBusinessTable creates an example's business table as the CDK app
// does: partition key "id" (S), on-demand billing.
func CreateBusinessTable(ctx context.Context, c *dynamodb.Client, table string) error {
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return fmt.Errorf("e2estack: create table %s: %w", table, err)
	}
	return nil
}

func with(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}
