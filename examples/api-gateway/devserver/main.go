// Command devserver serves the payments API on your machine with nothing
// installed but Go: an in-process DynamoDB-compatible endpoint (minidyn)
// holds both tables, created on start, and each HTTP request is translated
// into the HTTP API (payload format 2.0) event API Gateway would send.
//
//	make run                                   # http://127.0.0.1:8080
//	cd examples && go run ./api-gateway/devserver -addr :9000
//
// ADDR sets the address too. A request with "Authorization: Bearer <name>"
// acts as the JWT subject <name>, as if an authorizer had verified it
// (nothing is verified: this is a development tool). The data lives in
// memory and is gone when the server stops.
//
// This command is not part of the Lambda binary: minidyn stays out of
// bootstrap.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/truora/minidyn/server"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/api-gateway/payments"
	"github.com/lambdaidem/lambdaidem/examples/httpevent"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

func main() {
	def := os.Getenv("ADDR")
	if def == "" {
		def = "127.0.0.1:8080"
	}
	addr := flag.String("addr", def, "address to listen on (env ADDR)")
	flag.Parse()
	if err := run(*addr); err != nil {
		log.Fatalf("devserver: %v", err)
	}
}

func run(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	ddb := httptest.NewServer(server.NewServer())
	defer ddb.Close()
	// Explicit options, not config.LoadDefaultConfig: a CA bundle variable
	// in the environment breaks it with a custom endpoint.
	client := dynamodb.New(dynamodb.Options{
		BaseEndpoint: aws.String(ddb.URL),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	const idemTable, payTable = "idempotency", "payments"
	if err := ddbtest.CreateTable(ctx, client, idemTable); err != nil {
		return err
	}
	if err := payments.CreateTable(ctx, client, payTable); err != nil {
		return err
	}
	store, err := dynamostore.New(client, idemTable)
	if err != nil {
		return err
	}
	guard, err := lambdaidem.New(store)
	if err != nil {
		return err
	}
	api, err := payments.New(guard, client, payTable)
	if err != nil {
		return err
	}
	routes, err := httpevent.NewRoutes(payments.Routes()...)
	if err != nil {
		return err
	}
	t := &httpevent.Translator{Routes: routes, Claims: bearerSubject}
	srv := &http.Server{Addr: addr, Handler: logged(httpevent.Handler(t, api.Handle)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	fmt.Printf("payments API on http://%s (POST /payments, GET /payments/{id}); DynamoDB emulator at %s\n", addr, ddb.URL)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// bearerSubject plays a JWT authorizer without verifying anything.
func bearerSubject(r *http.Request) map[string]string {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
		return map[string]string{"sub": tok, "iss": "devserver"}
	}
	return nil
}

// logged logs one line per request.
func logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		h.ServeHTTP(rec, r)
		log.Printf("%s %s %d %v", r.Method, r.URL.Path, rec.status, time.Since(start).Round(time.Microsecond))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
