package chaos

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Beside its counts, a run is checked the way distributed stores are
// checked: every request's call and return are recorded, and the history
// is verified with a linearizability checker (porcupine) against a
// sequential model of the contract. Per key:
//
//   - the first commit wins: the key's state is the run whose effect was
//     committed, or none;
//   - every answer is that outcome: a success reports the committed run;
//     a request that committed it must have run it itself (a run of its own
//     handler), any other request reports it only once it is committed;
//   - a refusal has no effect: a request refused as in progress or as a
//     reused key, or whose handler failed before any external call, leaves
//     the state as it is;
//   - any other error is an unknown outcome: the request may have committed
//     one of its own runs (a crash after the commit, a lost response, a
//     failure after an external call that a reconciler later commits), or
//     nothing;
//   - after the drain the table is read: the committed effect it holds is
//     the state.
//
// A history is linearizable if its requests can be put in one order,
// consistent with real time (a request that returned before another was
// called comes first), in which every answer is the model's.

// answer is how a request ended, for the model.
type answer int

const (
	answerOK        answer = iota // a success reporting a run
	answerRefused                 // a refusal with no effect
	answerUnknown                 // an error that may hide a commit
	answerObserved                // the table read after the drain
	answerDelivered               // the relay published the outbox message of a run
)

// histInput is what a request asked: its key, and the runs of its own
// handler (what it could commit itself).
type histInput struct {
	key  string
	runs []string
}

// histOutput is how it ended.
type histOutput struct {
	answer answer
	run    string // answerOK: the run reported; answerObserved: the committed run, "" if none
}

// history records the requests of a run, safe for concurrent use.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func newHistory() *history { return &history{start: time.Now()} }

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// add records one request that was called at call.
func (h *history) add(call int64, in histInput, out histOutput) {
	ret := h.now()
	if ret <= call {
		ret = call + 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: len(h.ops), Input: in, Call: call, Output: out, Return: ret})
}

// observe records the table's committed run for key as a read at the end.
func (h *history) observe(key, run string) {
	call := h.now()
	h.add(call, histInput{key: key}, histOutput{answer: answerObserved, run: run})
}

// answerOf classifies a request's result for the model: refusals are
// only those that prove the request had no effect.
func answerOf(kind keyKind, out Receipt, err error) histOutput {
	var rec *lambdaidem.RecordError
	switch {
	case err == nil:
		return histOutput{answer: answerOK, run: out.Run}
	case errors.As(err, &rec) && (errors.Is(err, lambdaidem.ErrInProgress) || errors.Is(err, lambdaidem.ErrKeyReused)):
		return histOutput{answer: answerRefused}
	case errors.Is(err, errTransient) && kind != external:
		return histOutput{answer: answerRefused} // released; the staged write discarded
	}
	return histOutput{answer: answerUnknown}
}

// contract is the sequential model: per key, the committed run or "".
var contract = porcupine.NondeterministicModel{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range ops {
			k := op.Input.(histInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		parts := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() []any { return []any{""} },
	Step: func(state, input, output any) []any {
		committed, in, out := state.(string), input.(histInput), output.(histOutput)
		switch out.answer {
		case answerOK:
			if committed == out.run || committed == "" && slices.Contains(in.runs, out.run) {
				return []any{out.run}
			}
			return nil
		case answerRefused:
			return []any{committed}
		case answerUnknown:
			next := []any{committed}
			if committed == "" {
				for _, run := range in.runs {
					next = append(next, run)
				}
			}
			return next
		case answerDelivered:
			// A published message is the committed run's: a message of a
			// run that never committed, or published before its commit,
			// has no place in any order.
			if committed == out.run && committed != "" {
				return []any{committed}
			}
			return nil
		case answerObserved:
			if committed == out.run {
				return []any{committed}
			}
			return nil
		}
		return nil
	},
	Equal: func(a, b any) bool { return a.(string) == b.(string) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(histInput), output.(histOutput)
		return fmt.Sprintf("%s runs=%v → %v %s", in.key, in.runs, out.answer, out.run)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("committed %q", state) },
}

// checkLinearizable checks the recorded history against the contract. It
// returns "" if the history is linearizable, else why not.
func (h *history) checkLinearizable(timeout time.Duration) (ops int, problem string) {
	h.mu.Lock()
	ops2 := slices.Clone(h.ops)
	h.mu.Unlock()
	model := contract.ToModel()
	switch porcupine.CheckOperationsTimeout(model, ops2, timeout) {
	case porcupine.Ok:
		return len(ops2), ""
	case porcupine.Unknown:
		return len(ops2), fmt.Sprintf("the linearizability check of %d requests timed out after %v", len(ops2), timeout)
	}
	// Name (up to three of) the keys whose history has no linearization.
	var bad []string
	byKey := contract.Partition(ops2)
	for _, part := range byKey {
		if !porcupine.CheckOperations(model, part) {
			bad = append(bad, describeKeyHistory(part))
			if len(bad) == 3 {
				break
			}
		}
	}
	return len(ops2), "history not linearizable against the contract: " + strings.Join(bad, "; ")
}

// describeKeyHistory renders one key's requests, in call order.
func describeKeyHistory(ops []porcupine.Operation) string {
	ops = slices.Clone(ops)
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	var b strings.Builder
	for i, op := range ops {
		if i == 0 {
			b.WriteString(op.Input.(histInput).key + ": ")
		} else {
			b.WriteString(", ")
		}
		in, out := op.Input.(histInput), op.Output.(histOutput)
		fmt.Fprintf(&b, "[%s %v→%s]", out.answer, in.runs, out.run)
	}
	return b.String()
}

func (a answer) String() string {
	return [...]string{"ok", "refused", "unknown", "observed", "delivered"}[a]
}
