// Command devserver serves the payments API on your machine with nothing
// installed but Go: an in-process DynamoDB-compatible endpoint (minidyn
// behind ddbtest's fidelity proxy, which answers as DynamoDB does where
// minidyn departs from it, parallel scan segments included) holds both
// tables, created on start, and each HTTP request is translated
// into the HTTP API (payload format 2.0) event API Gateway would send.
//
//	make run                                   # http://127.0.0.1:8080
//	cd examples && go run ./api-gateway/devserver -addr :9000
//
// ADDR sets the address too. A request with "Authorization: Bearer <name>"
// acts as the JWT subject <name>, as if an authorizer had verified it
// (nothing is verified: this is a development tool). The data lives in
// memory and is gone when the server stops. With -router it serves the
// same API as the go-chi router of examples/function-url, made idempotent
// by the net/http middleware (httpidem) instead of apigw.
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

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/api-gateway/payments"
	"github.com/lambdaidem/lambdaidem/examples/httpevent"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
)

func main() {
	def := os.Getenv("ADDR")
	if def == "" {
		def = "127.0.0.1:8080"
	}
	addr := flag.String("addr", def, "address to listen on (env ADDR)")
	router := flag.Bool("router", false, "serve the API as the go-chi router with the httpidem middleware (examples/function-url) instead of HTTP API events")
	flag.Parse()
	if err := run(*addr, *router); err != nil {
		log.Fatalf("devserver: %v", err)
	}
}

func run(addr string, router bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	ddb := httptest.NewServer(ddbtest.NewProxy(ddbtest.NewEmulator()))
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
	handler, err := eventHandler(guard, client, payTable)
	if router {
		handler, err = payments.NewHandler(guard, client, payTable, func(o *payments.HandlerOptions) {
			o.Idempotency = append(o.Idempotency, func(o *httpidem.Options) { o.Scope = bearerScope })
		})
	}
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: logged(handler), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	fmt.Printf("payments API on http://%s (POST /payments, GET /payments/{id}); DynamoDB endpoint at %s, idempotency table %q\n", addr, ddb.URL, idemTable)
	fmt.Printf("its records, with the lambdaidem command (any credentials do):\n  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_REGION=us-east-1 lambdaidem list --endpoint %s --table %s\n", ddb.URL, idemTable)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// eventHandler serves the API's HTTP API handler, translating each request
// into the event API Gateway would send.
func eventHandler(guard *lambdaidem.Guard, client *dynamodb.Client, table string) (http.Handler, error) {
	api, err := payments.New(guard, client, table)
	if err != nil {
		return nil, err
	}
	routes, err := httpevent.NewRoutes(payments.Routes()...)
	if err != nil {
		return nil, err
	}
	return httpevent.Handler(&httpevent.Translator{Routes: routes, Claims: bearerSubject}, api.Handle), nil
}

// bearerScope is the router's Scope: the bearer token as the JWT subject
// of issuer "devserver", the principal bearerSubject's events yield, so
// that both modes scope keys alike. A request without one is refused.
func bearerScope(r *http.Request) (string, error) {
	c := bearerSubject(r)
	return httpidem.JWTPrincipal(c["iss"], c["sub"]), nil
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
