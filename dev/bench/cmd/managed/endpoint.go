package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// serve runs the endpoints in this (child) process, one emulator and proxy
// per shard: the proxy serves its requests one at a time, and DynamoDB
// does not serialize writes to different items, so one endpoint for the
// whole process would queue 64 invocations behind each other. It prints
// the URLs on one line and serves until its standard input closes.
func serve(latency time.Duration) error {
	var urls []string
	var srvs []*http.Server
	for range shards {
		p := ddbtest.NewProxy(ddbtest.NewEmulator())
		p.SetLatency(latency)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		srvs = append(srvs, srv)
		urls = append(urls, "http://"+ln.Addr().String())
	}
	// Last, the stand-in: every write accepted after the latency, with next
	// to no CPU spent (see standIn).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: standIn(latency), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	srvs = append(srvs, srv)
	urls = append(urls, "http://"+ln.Addr().String())
	fmt.Println(strings.Join(urls, " "))
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, s := range srvs {
		_ = s.Close()
	}
	return nil
}

// standIn answers every request with an empty success after latency: not
// an emulator (it stores nothing, so it serves only writes whose answer
// is empty: PutItem, TransactWriteItems), but a DynamoDB whose service
// time is the latency and whose CPU is not the function's, which the
// emulator's is on a shared machine. The bench's latency ratios use it to
// see the wrapper's own cost.
func standIn(latency time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(latency)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte("{}"))
	})
}

// serveEnv, set to a latency, makes this program (or its test binary) the
// endpoint process.
const serveEnv = "LAMBDAIDEM_MANAGED_SERVE"

// serveIfChild serves the endpoints and exits if this process was started
// as the endpoint process.
func serveIfChild() {
	v, ok := os.LookupEnv(serveEnv)
	if !ok {
		return
	}
	latency, err := time.ParseDuration(v)
	if err == nil {
		err = serve(latency)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// child is the endpoint process.
type child struct {
	urls    []string // one per shard
	standIn string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
}

func startChild(ctx context.Context, latency time.Duration) (*child, error) {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+latency.String())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	urls := strings.Fields(line)
	if err != nil || len(urls) != shards+1 {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("endpoint process: %q, %v", line, err)
	}
	return &child{urls: urls[:shards], standIn: urls[shards], cmd: cmd, stdin: in}, nil
}

func (c *child) close() {
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
	}
}

// counter counts the DynamoDB calls of the process, by operation.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(op string) {
	c.mu.Lock()
	c.n[op]++
	c.mu.Unlock()
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.n))
	for k, v := range c.n {
		m[k] = v
	}
	return m
}

// counting is a shard's client, counting its calls.
type counting struct {
	dynamostore.Client
	*counter
}

func (c *counting) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.add("GetItem")
	return c.Client.GetItem(ctx, in, o...)
}
func (c *counting) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.add("PutItem")
	return c.Client.PutItem(ctx, in, o...)
}
func (c *counting) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.add("UpdateItem")
	return c.Client.UpdateItem(ctx, in, o...)
}
func (c *counting) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.add("DeleteItem")
	return c.Client.DeleteItem(ctx, in, o...)
}
func (c *counting) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.add("TransactWriteItems")
	return c.Client.TransactWriteItems(ctx, in, o...)
}

// shards is how many idempotency and business tables the traffic spreads
// over: minidyn v0.8.2 copies a whole table for every transaction that
// touches it, which DynamoDB does not; small tables keep that off the
// figures.
const shards = 64

func idemTable(n int) string { return fmt.Sprintf("mi-idem-%02d", n) }
func bizTable(n int) string  { return fmt.Sprintf("mi-biz-%02d", n) }

// shardOf places a key.
func shardOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % shards)
}

// router is one lambdaidem.Store over the sharded idempotency tables: one
// Guard serves the whole process, as on Managed Instances.
type router struct {
	stores [shards]*dynamostore.Store
	renews atomic.Int64
}

func newRouter(ctx context.Context, clients []*counting, raws []*dynamodb.Client, create bool) (*router, error) {
	r := &router{}
	for n := range shards {
		client, raw := clients[n], raws[n]
		var err error
		if !create {
			if r.stores[n], err = dynamostore.New(client, idemTable(n)); err != nil {
				return nil, err
			}
			continue
		}
		var inUse *types.ResourceInUseException
		if err := ddbtest.CreateTable(ctx, raw, idemTable(n)); err != nil && !errors.As(err, &inUse) {
			return nil, err // the soak reuses the bench's tables
		}
		_, err = raw.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String(bizTable(n)),
			BillingMode:          types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		})
		if err != nil && !errors.As(err, &inUse) {
			return nil, err
		}
		if r.stores[n], err = dynamostore.New(client, idemTable(n)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *router) of(key string) *dynamostore.Store { return r.stores[shardOf(key)] }

func (r *router) Claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	return r.of(c.Key).Claim(ctx, c)
}
func (r *router) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	return r.of(c.Key).Commit(ctx, c)
}
func (r *router) Renew(ctx context.Context, rn lambdaidem.Renewal) (bool, error) {
	r.renews.Add(1)
	return r.of(rn.Key).Renew(ctx, rn)
}
func (r *router) MarkExternal(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	return r.of(f.Key).MarkExternal(ctx, f)
}
func (r *router) Release(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	return r.of(f.Key).Release(ctx, f)
}
func (r *router) MarkUnknown(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	return r.of(f.Key).MarkUnknown(ctx, f)
}
func (r *router) Get(ctx context.Context, key string, now time.Time) (lambdaidem.Record, error) {
	return r.of(key).Get(ctx, key, now)
}

var _ lambdaidem.Store = (*router)(nil)
