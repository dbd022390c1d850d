package lambdaidem

import (
	"context"
	"log/slog"
)

// defaultLogHandler is the Guard's log handler when Options.Logger is nil:
// it passes records of level Error and above to the handler of
// slog.Default(), read at each call, so that a program that sets its
// default logger after building the Guard is obeyed. with holds the
// WithAttrs and WithGroup calls made on it, in order.
type defaultLogHandler struct {
	with []func(slog.Handler) slog.Handler
}

func (h defaultLogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelError && slog.Default().Handler().Enabled(ctx, level)
}

func (h defaultLogHandler) Handle(ctx context.Context, r slog.Record) error {
	inner := slog.Default().Handler()
	for _, fn := range h.with {
		inner = fn(inner)
	}
	return inner.Handle(ctx, r)
}

func (h defaultLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.then(func(in slog.Handler) slog.Handler { return in.WithAttrs(attrs) })
}

func (h defaultLogHandler) WithGroup(name string) slog.Handler {
	return h.then(func(in slog.Handler) slog.Handler { return in.WithGroup(name) })
}

func (h defaultLogHandler) then(fn func(slog.Handler) slog.Handler) slog.Handler {
	return defaultLogHandler{with: append(h.with[:len(h.with):len(h.with)], fn)}
}

// log writes one line of the Guard's, with the given attributes.
func (g *Guard) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	l := g.opts.Logger
	if !l.Enabled(ctx, level) {
		return
	}
	l.LogAttrs(ctx, level, "lambdaidem: "+msg, attrs...)
}
