package e2estack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/examples/httpevent"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// Gateway plays API Gateway's HTTP API on a loopback port: each request
// becomes a payload format 2.0 event (examples/httpevent), the function is
// invoked with it, and its response is written back. A function error,
// timeout or crash gets 500 {"message":"Internal Server Error"}, as an HTTP
// API answers.
type Gateway struct {
	// URL is the API's base URL.
	URL string

	srv *http.Server
}

// StartGateway serves the routes (HTTP API route keys such as
// "POST /payments") with fn on 127.0.0.1. Stop it with Close.
func StartGateway(fn rie.Invoker, routes ...string) (*Gateway, error) {
	rs, err := httpevent.NewRoutes(routes...)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("e2estack: listen for the gateway: %w", err)
	}
	t := &httpevent.Translator{Routes: rs}
	g := &Gateway{URL: "http://" + l.Addr().String()}
	g.srv = &http.Server{Handler: gatewayHandler(t, fn), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = g.srv.Serve(l) }()
	return g, nil
}

// Close stops the gateway.
func (g *Gateway) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = g.srv.Shutdown(ctx)
	_ = g.srv.Close()
}

func gatewayHandler(t *httpevent.Translator, fn rie.Invoker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := t.Event(r)
		switch {
		case errors.Is(err, httpevent.ErrNoRoute):
			writeMessage(w, http.StatusNotFound, "Not Found")
			return
		case err != nil:
			writeMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
			return
		}
		payload, err := json.Marshal(e)
		if err != nil {
			writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		inv, err := fn.Invoke(r.Context(), payload)
		if err != nil || inv.FunctionError != "" {
			w.Header().Set("X-E2e-Function-Error", functionError(inv, err))
			writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(inv.Payload, &resp); err != nil {
			writeMessage(w, http.StatusBadGateway, "Internal Server Error")
			return
		}
		if err := httpevent.WriteResponse(w, resp); err != nil {
			writeMessage(w, http.StatusBadGateway, "Internal Server Error")
		}
	})
}

// functionError names why an invocation failed, for the harness's
// X-E2e-Function-Error header (API Gateway sends no such header).
func functionError(inv rie.Invocation, err error) string {
	if err != nil {
		return "InvokeError"
	}
	return inv.FunctionError
}

func writeMessage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q}`, msg)
}
