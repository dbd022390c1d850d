package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// The relay refuses to start without its table or with a bad retention,
// saying which variable.
func TestSetupRefuses(t *testing.T) {
	for env, want := range map[string]string{
		"":                   "OUTBOX_TABLE",
		"OUTBOX_RETENTION=x": "OUTBOX_RETENTION",
	} {
		getenv := func(k string) string {
			if k == "OUTBOX_TABLE" && env != "" {
				return "outbox"
			}
			if name, v, ok := strings.Cut(env, "="); ok && k == name {
				return v
			}
			return ""
		}
		if _, err := setup(context.Background(), getenv, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("env %q: setup = %v; want an error naming %s", env, err, want)
		}
	}
}
