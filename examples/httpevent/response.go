package httpevent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
)

// WriteResponse writes a handler's response to w as API Gateway would:
// the status (200 if zero), headers (multi-valued ones too), cookies as
// Set-Cookie headers, and the body, base64-decoded if it says so. A body
// that does not decode is an error and nothing is written.
func WriteResponse(w http.ResponseWriter, resp events.APIGatewayV2HTTPResponse) error {
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			return fmt.Errorf("httpevent: response body is not base64: %w", err)
		}
		body = b
	}
	h := w.Header()
	for name, v := range resp.Headers {
		h.Set(name, v)
	}
	for name, vs := range resp.MultiValueHeaders {
		h.Del(name)
		for _, v := range vs {
			h.Add(name, v)
		}
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

// Handler serves HTTP with a Lambda handler of HTTP API events. A request
// that matches no route gets 404 {"message":"Not Found"}, and a handler
// error 500 {"message":"Internal Server Error"}, as API Gateway answers;
// the error is logged to slog's default logger.
func Handler(t *Translator, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := t.Event(r)
		switch {
		case errors.Is(err, ErrNoRoute):
			writeMessage(w, http.StatusNotFound, "Not Found")
			return
		case err != nil:
			writeMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
			return
		}
		resp, err := h(r.Context(), e)
		if err != nil {
			slog.ErrorContext(r.Context(), "httpevent: handler failed", "route", e.RouteKey, "error", err)
			writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		if err := WriteResponse(w, resp); err != nil {
			slog.ErrorContext(r.Context(), "httpevent: bad response", "route", e.RouteKey, "error", err)
			writeMessage(w, http.StatusBadGateway, "Internal Server Error")
		}
	})
}

func writeMessage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q}`, msg)
}
