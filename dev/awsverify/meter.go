package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// meter asks for ReturnConsumedCapacity=TOTAL on every request of a client
// and keeps what each response reported, by the label the caller put in
// the context (withShape), else by operation.
type meter struct {
	mu    sync.Mutex
	order []string
	by    map[string]*metered
}

// metered is what one label's requests reported.
type metered struct {
	Requests int
	Reported int      // responses that carried ConsumedCapacity
	Units    float64  // CapacityUnits, summed over the tables of each response
	Write    float64  // WriteCapacityUnits, where given
	Read     float64  // ReadCapacityUnits, where given
	Errors   []string // error codes of the requests that failed
}

func newMeter() *meter { return &meter{by: map[string]*metered{}} }

type shapeKey struct{}

// withShape labels the requests sent under ctx.
func withShape(ctx context.Context, shape string) context.Context {
	return context.WithValue(ctx, shapeKey{}, shape)
}

// option installs the meter on a client.
func (m *meter) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("awsverifyMeter", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			op := askCapacity(in.Parameters)
			out, md, err := next.HandleInitialize(ctx, in)
			label, _ := ctx.Value(shapeKey{}).(string)
			if label == "" {
				label = op
			}
			m.observe(label, out.Result, err)
			return out, md, err
		}), middleware.Before)
	})
}

// askCapacity sets ReturnConsumedCapacity=TOTAL on a request that has none
// and returns the operation's name.
func askCapacity(params any) string {
	total := types.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		if in.ReturnConsumedCapacity == "" {
			in.ReturnConsumedCapacity = total
		}
		return "GetItem"
	case *dynamodb.PutItemInput:
		if in.ReturnConsumedCapacity == "" {
			in.ReturnConsumedCapacity = total
		}
		return "PutItem"
	case *dynamodb.UpdateItemInput:
		if in.ReturnConsumedCapacity == "" {
			in.ReturnConsumedCapacity = total
		}
		return "UpdateItem"
	case *dynamodb.DeleteItemInput:
		if in.ReturnConsumedCapacity == "" {
			in.ReturnConsumedCapacity = total
		}
		return "DeleteItem"
	case *dynamodb.TransactWriteItemsInput:
		if in.ReturnConsumedCapacity == "" {
			in.ReturnConsumedCapacity = total
		}
		return "TransactWriteItems"
	case *dynamodb.QueryInput:
		if in.ReturnConsumedCapacity == "" {
			in.ReturnConsumedCapacity = total
		}
		return "Query"
	case *dynamodb.ScanInput:
		if in.ReturnConsumedCapacity == "" {
			in.ReturnConsumedCapacity = total
		}
		return "Scan"
	}
	return fmt.Sprintf("%T", params)
}

// consumed extracts the ConsumedCapacity of a response.
func consumed(result any) ([]types.ConsumedCapacity, bool) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		return out.ConsumedCapacity, len(out.ConsumedCapacity) > 0
	}
	return nil, false
}

func one(c *types.ConsumedCapacity) ([]types.ConsumedCapacity, bool) {
	if c == nil {
		return nil, false
	}
	return []types.ConsumedCapacity{*c}, true
}

func (m *meter) observe(label string, result any, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.by[label]
	if !ok {
		e = &metered{}
		m.by[label] = e
		m.order = append(m.order, label)
	}
	e.Requests++
	if err != nil {
		e.Errors = append(e.Errors, errorDetail(err))
		return
	}
	cc, ok := consumed(result)
	if !ok {
		return
	}
	e.Reported++
	for _, c := range cc {
		e.add(c)
	}
}

// add sums one ConsumedCapacity: its CapacityUnits, and the read and
// write split when the response gives it.
func (e *metered) add(c types.ConsumedCapacity) {
	if c.CapacityUnits != nil {
		e.Units += *c.CapacityUnits
	}
	if c.WriteCapacityUnits != nil {
		e.Write += *c.WriteCapacityUnits
	}
	if c.ReadCapacityUnits != nil {
		e.Read += *c.ReadCapacityUnits
	}
}

// labels returns the labels in the order first seen.
func (m *meter) labels() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.order...)
}

// get returns a copy of what label's requests reported.
func (m *meter) get(label string) metered {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.by[label]; ok {
		c := *e
		c.Errors = append([]string(nil), e.Errors...)
		return c
	}
	return metered{}
}

// reset forgets everything.
func (m *meter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.order, m.by = nil, map[string]*metered{}
}

// String renders what was reported: the capacity units, or "none
// reported" with the errors.
func (e metered) String() string {
	if e.Requests == 0 {
		return "not sent"
	}
	var parts []string
	if e.Reported > 0 {
		parts = append(parts, fmt.Sprintf("%s units (%s write, %s read)", fmtUnits(e.Units), fmtUnits(e.Write), fmtUnits(e.Read)))
	}
	if e.Reported < e.Requests {
		what := "none reported"
		if len(e.Errors) > 0 {
			what += " (" + strings.Join(dedupe(e.Errors), ", ") + ")"
		}
		parts = append(parts, what)
	}
	return strings.Join(parts, "; ")
}

func fmtUnits(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func dedupe(s []string) []string {
	seen := map[string]int{}
	var out []string
	for _, v := range s {
		if seen[v] == 0 {
			out = append(out, v)
		}
		seen[v]++
	}
	for i, v := range out {
		if seen[v] > 1 {
			out[i] = fmt.Sprintf("%s ×%d", v, seen[v])
		}
	}
	return out
}

// errorDetail is an error's code, with a cancelled transaction's reason
// codes: "TransactionCanceledException[TransactionConflict None]".
func errorDetail(err error) string {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		var codes []string
		for _, r := range tce.CancellationReasons {
			codes = append(codes, aws.ToString(r.Code))
		}
		return "TransactionCanceledException[" + strings.Join(codes, " ") + "]"
	}
	return errorCode(err)
}

// count is how many errors of every label contain substr.
func (m *meter) count(substr string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := 0
	for _, e := range m.by {
		for _, x := range e.Errors {
			if strings.Contains(x, substr) {
				c++
			}
		}
	}
	return c
}
