// Command function-url is the payments API as an http.Handler (a go-chi
// router) made idempotent by the net/http middleware httpidem: on Lambda
// behind a Function URL (lambdaurl, InvokeMode RESPONSE_STREAM) and, the
// same binary, as a plain HTTP server in a container or on your machine.
// See README.md.
//
// Environment:
//
//	IDEMPOTENCY_TABLE          the idempotency table (required)
//	PAYMENTS_TABLE             the payments table, partition key "id" (S) (required)
//	IDEMPOTENCY_TTL            how long a key is remembered, a Go duration (default 24h)
//	IDEMPOTENCY_*_ATTR, IDEMPOTENCY_SORT_KEY_VALUE  the table's attribute names (see dynamostore.ReadEnv)
//	IDEMPOTENCY_SEAL_KEY, IDEMPOTENCY_SEAL_PREVIOUS_KEYS, IDEMPOTENCY_SEAL_CONTEXT
//	                           set: stored outcomes are sealed under this KMS key, as
//	                           lambdaidemcdk.BindSealing grants (see kmsseal.ReadEnv)
//	AWS_ENDPOINT_URL_DYNAMODB  honoured by the AWS SDK itself (LocalStack, an emulator)
//
// As a server (when AWS_LAMBDA_RUNTIME_API is not set):
//
//	ADDR                       the address to listen on (default 127.0.0.1:8080)
//	API_KEYS                   "secret=caller,…": the bearer tokens the server accepts and the callers
//	                           they stand for (required: in a container the middleware reads no identity)
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/api-gateway/payments"
	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
)

func main() {
	ctx := context.Background()
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		// A Function URL: the caller is the event's IAM caller (AuthType
		// AWS_IAM), which the middleware reads itself.
		h, err := setup(ctx, os.Getenv, nil)
		if err != nil {
			log.Fatalf("function-url: %v", err)
		}
		lambdaurl.Start(h)
		return
	}
	if err := serve(ctx, os.Getenv); err != nil {
		log.Fatalf("function-url: %v", err)
	}
}

// serve runs the API as a plain HTTP server until interrupted.
func serve(ctx context.Context, getenv func(string) string) error {
	keys, err := parseAPIKeys(getenv("API_KEYS"))
	if err != nil {
		return err
	}
	h, err := setup(ctx, getenv, callerScope)
	if err != nil {
		return err
	}
	addr := getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: authenticate(keys, h), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("function-url: serving on http://%s", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// setup builds the clients once, at start. scope is the middleware's
// Options.Scope: nil on Lambda.
func setup(ctx context.Context, getenv func(string) string, scope func(*http.Request) (string, error)) (http.Handler, error) {
	s, err := dynamostore.ReadEnv(getenv)
	sealing, serr := kmsseal.ReadEnv(getenv)
	err = errors.Join(err, serr)
	paymentsTable := getenv("PAYMENTS_TABLE")
	if paymentsTable == "" {
		err = errors.Join(err, errors.New("PAYMENTS_TABLE is not set"))
	}
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	sealer, err := sealing.Sealer(ctx, kms.NewFromConfig(cfg))
	if err != nil {
		return nil, err
	}
	client := dynamodb.NewFromConfig(cfg)
	return newHandler(client, s, paymentsTable, scope, func(o *lambdaidem.Options) {
		if sealer != nil {
			o.Sealer = sealer // outcomes encrypted under the KMS key (cdk: -c sealing=true)
		}
	})
}

// newHandler is the API over client: the store, the Guard and the router.
func newHandler(client *dynamodb.Client, s dynamostore.Env, paymentsTable string, scope func(*http.Request) (string, error),
	guardOpts ...func(*lambdaidem.Options)) (http.Handler, error) {
	store, err := dynamostore.New(client, s.Table, s.StoreOptions)
	if err != nil {
		return nil, err
	}
	guard, err := lambdaidem.New(store, append([]func(*lambdaidem.Options){
		func(o *lambdaidem.Options) { o.RetryHorizon = s.RetryHorizon }}, guardOpts...)...)
	if err != nil {
		return nil, err
	}
	return payments.NewHandler(guard, client, paymentsTable, func(o *payments.HandlerOptions) {
		o.Idempotency = append(o.Idempotency, func(o *httpidem.Options) { o.Scope = scope })
	})
}

// callerKey is the context key of the caller authenticate verified.
type callerKey struct{}

// authenticate admits requests whose bearer token is one of keys and puts
// its caller in the request's context; it refuses the others with 401.
// Replace it with your own authentication (a JWT verifier, say: then
// return httpidem.JWTPrincipal(issuer, subject) from the Scope).
func authenticate(keys map[string]string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		caller, known := keys[token]
		if !ok || !known {
			w.Header().Set("WWW-Authenticate", `Bearer realm="payments"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)))
	})
}

// callerScope is the middleware's Scope in a server: the caller
// authenticate verified. A request without one is refused (never run in a
// shared scope).
func callerScope(r *http.Request) (string, error) {
	caller, _ := r.Context().Value(callerKey{}).(string)
	if caller == "" {
		return "", nil
	}
	return "apikey:" + caller, nil
}

// parseAPIKeys reads "secret=caller,…".
func parseAPIKeys(s string) (map[string]string, error) {
	keys := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		secret, caller, ok := strings.Cut(pair, "=")
		if !ok || secret == "" || caller == "" {
			return nil, fmt.Errorf("API_KEYS: %q is not secret=caller", pair)
		}
		keys[secret] = caller
	}
	if len(keys) == 0 {
		return nil, errors.New("API_KEYS is not set: a server must know who its callers are (see README.md)")
	}
	return keys, nil
}
