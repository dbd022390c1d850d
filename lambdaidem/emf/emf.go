package emf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The metric names; see the package documentation for what each counts.
const (
	Claims            = "Claims"
	CacheReplays      = "CacheReplays"
	StoreReplays      = "StoreReplays"
	RefusedInProgress = "RefusedInProgress"
	RefusedKeyReused  = "RefusedKeyReused"
	RefusedUnknown    = "RefusedUnknown"
	LeaseLost         = "LeaseLost"
	MarkedUnknown     = "MarkedUnknown"
	UnknownAge        = "UnknownAge"
	FailOpen          = "FailOpen"
	StoreErrors       = "StoreErrors"
	CommitLatency     = "CommitLatency"
	OutboxSetAside    = "OutboxSetAside"
)

// The dimension names.
const (
	DimService   = "Service"
	DimOperation = "Operation"
)

// Limits of the EMF specification and of CloudWatch dimensions.
const (
	maxNamespace      = 255
	maxDimensionValue = 1024
)

// Options configure [Metrics]. The zero value is valid.
type Options struct {
	// Namespace is the CloudWatch namespace of every metric: 1 to 255
	// ASCII characters, not starting with a colon. Default "lambdaidem".
	Namespace string

	// Service is the value of the Service dimension, naming the function
	// or service across its operations: 1 to 1024 printable ASCII
	// characters. Default "lambdaidem".
	Service string

	// Now is the clock for each line's Timestamp. Default time.Now.
	Now func() time.Time
}

// Metrics writes one EMF line per hook call. It is safe for concurrent
// use: each line is written with one Write call, under a lock.
type Metrics struct {
	w    io.Writer
	opts Options
	mu   sync.Mutex // serializes writes and guards buf
	buf  []byte
}

// New returns Metrics writing to w (a Lambda function's os.Stdout), with
// the options applied to the defaults. It returns an error if w is nil or
// an option is invalid.
func New(w io.Writer, optFns ...func(*Options)) (*Metrics, error) {
	if w == nil {
		return nil, errors.New("emf: nil writer")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Namespace == "" {
		o.Namespace = "lambdaidem"
	}
	if o.Service == "" {
		o.Service = "lambdaidem"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if n := len(o.Namespace); n > maxNamespace || strings.HasPrefix(o.Namespace, ":") || !printableASCII(o.Namespace) {
		return nil, fmt.Errorf("emf: Namespace %q must be 1 to %d printable ASCII characters, not starting with ':'", o.Namespace, maxNamespace)
	}
	if len(o.Service) > maxDimensionValue || !printableASCII(o.Service) || strings.TrimSpace(o.Service) == "" {
		return nil, fmt.Errorf("emf: Service %q must be 1 to %d printable ASCII characters", o.Service, maxDimensionValue)
	}
	return &Metrics{w: w, opts: o}, nil
}

// Hooks returns the hooks that write the metrics. Set them as
// lambdaidem.Options.Hooks; to add hooks of your own, call these from
// yours.
func (m *Metrics) Hooks() lambdaidem.Hooks {
	return lambdaidem.Hooks{
		OnClaim: func(_ context.Context, e lambdaidem.Event) { m.count(e, Claims) },
		OnReplay: func(_ context.Context, e lambdaidem.Event) {
			if e.From == "cache" {
				m.count(e, CacheReplays)
			} else {
				m.count(e, StoreReplays)
			}
		},
		OnConflict: func(_ context.Context, e lambdaidem.Event, err error) {
			switch {
			case errors.Is(err, lambdaidem.ErrInProgress):
				m.count(e, RefusedInProgress)
			case errors.Is(err, lambdaidem.ErrKeyReused):
				m.count(e, RefusedKeyReused)
			case errors.Is(err, lambdaidem.ErrOutcomeUnknown) && !e.Since.IsZero():
				m.write(e, metric{RefusedUnknown, "Count", 1}, metric{UnknownAge, "Seconds", m.opts.Now().Sub(e.Since).Seconds()})
			case errors.Is(err, lambdaidem.ErrOutcomeUnknown):
				m.count(e, RefusedUnknown)
			case errors.Is(err, lambdaidem.ErrLeaseLost):
				m.count(e, LeaseLost)
			}
		},
		OnCommit: func(_ context.Context, e lambdaidem.Event) {
			m.write(e, metric{CommitLatency, "Milliseconds", float64(e.Duration) / float64(time.Millisecond)})
		},
		OnUnknown:    func(_ context.Context, e lambdaidem.Event) { m.count(e, MarkedUnknown) },
		OnFailOpen:   func(_ context.Context, e lambdaidem.Event, _ error) { m.count(e, FailOpen) },
		OnStoreError: func(_ context.Context, e lambdaidem.Event, _ error) { m.count(e, StoreErrors) },
	}
}

// WriteUnknownAge writes one line with UnknownAge: age, the age of the
// oldest UNKNOWN record a scan of the table found (the lambdaidem
// command's list --emf), or 0 when it found none. The hooks write
// UnknownAge only when a duplicate meets an UNKNOWN record; a scheduled
// scan writes it for the records nobody retries, so that the alarm on its
// Maximum (lambdaidemcdk's UnknownAge alarm, on the Service dimension)
// fires for them too. operation is the Operation dimension's value: a
// scan cannot tell operations apart (their names are hashed into the
// record keys), so give it a name of the scan's own ("" is "unnamed").
func (m *Metrics) WriteUnknownAge(operation string, age time.Duration) {
	m.write(lambdaidem.Event{Operation: operation}, metric{UnknownAge, "Seconds", max(age, 0).Seconds()})
}

// WriteSetAside writes one OutboxSetAside count: the outbox relay
// (dynamostore/relay, Options.Metrics) set aside a message that cannot be
// published, of the given kind (the Operation dimension's value: "sqs",
// "sns-fifo", ...), so that lambdaidemcdk's set-aside alarm, on its Sum by
// the Service dimension, fires.
func (m *Metrics) WriteSetAside(kind string) {
	m.count(lambdaidem.Event{Operation: kind}, OutboxSetAside)
}

type metric struct {
	name  string
	unit  string
	value float64
}

func (m *Metrics) count(e lambdaidem.Event, name string) { m.write(e, metric{name, "Count", 1}) }

// write appends one EMF document for the metrics ms of event e to the
// Metrics' buffer and writes it with one Write call. The document is
// {"_aws":{"Timestamp":…,"CloudWatchMetrics":[{"Namespace":…,
// "Dimensions":[["Service","Operation"],["Service"]],"Metrics":[{"Name":…,
// "Unit":…},…]}]},"Service":…,"Operation":…,"<metric>":<value>,…}.
// Every string in it is printable ASCII (New checks the namespace and
// service; operation names are made so), for which strconv.AppendQuote
// writes a valid JSON string.
func (m *Metrics) write(e lambdaidem.Event, ms ...metric) {
	op := dimensionValue(e.Operation)
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.buf[:0]
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, m.opts.Now().UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":`...)
	b = strconv.AppendQuote(b, m.opts.Namespace)
	b = append(b, `,"Dimensions":[["`+DimService+`","`+DimOperation+`"],["`+DimService+`"]],"Metrics":[`...)
	for i, mt := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Name":`...)
		b = strconv.AppendQuote(b, mt.name)
		b = append(b, `,"Unit":`...)
		b = strconv.AppendQuote(b, mt.unit)
		b = append(b, '}')
	}
	b = append(b, `]}]},"`+DimService+`":`...)
	b = strconv.AppendQuote(b, m.opts.Service)
	b = append(b, `,"`+DimOperation+`":`...)
	b = strconv.AppendQuote(b, op)
	for _, mt := range ms {
		b = append(b, ',')
		b = strconv.AppendQuote(b, mt.name)
		b = append(b, ':')
		b = strconv.AppendFloat(b, mt.value, 'f', -1, 64)
	}
	b = append(b, '}', '\n')
	m.buf = b
	_, _ = m.w.Write(b) // a metric line that cannot be written must not fail the invocation
}

// dimensionValue makes an operation name a valid dimension value: printable
// ASCII only (others become '_'), at most 1024 bytes, never empty.
func dimensionValue(s string) string {
	if printableASCII(s) && len(s) <= maxDimensionValue && strings.TrimSpace(s) != "" {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if b.Len() == maxDimensionValue {
			break
		}
		if r < unicode.MaxASCII && unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "unnamed"
	}
	return b.String()
}

func printableASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
