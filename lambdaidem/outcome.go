package lambdaidem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// envelope is the stored form of an outcome: a value, or a terminal error.
// A value is JSON in Value, or, encoded by an Options.Codec, bytes in Bin.
type envelope struct {
	Value json.RawMessage `json:"value,omitempty"`
	Bin   []byte          `json:"bin,omitempty"`
	Err   *storedError    `json:"error,omitempty"`
}

type storedError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// valuePrefix and valueSuffix frame a stored value: the bytes
// json.Marshal(envelope{Value: v}) gives for a compact v, written directly
// so that the value is not scanned a second time.
const (
	valuePrefix = `{"value":`
	valueSuffix = `}`
)

func encodeValue[Out any](codec Codec, out Out) ([]byte, error) {
	if codec != nil {
		b, err := codec.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("lambdaidem: encode outcome: %w", err)
		}
		return json.Marshal(envelope{Bin: b})
	}
	v, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("lambdaidem: encode outcome: %w", err)
	}
	data := make([]byte, 0, len(valuePrefix)+len(v)+len(valueSuffix))
	data = append(data, valuePrefix...)
	data = append(data, v...)
	return append(data, valueSuffix...), nil
}

func encodeError(err error) ([]byte, error) {
	return json.Marshal(envelope{Err: &storedError{Type: errorType(err), Message: err.Error()}})
}

// errorType names err's type the way the Lambda runtime does.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// decodeOutcome turns a stored outcome back into the handler's result.
func decodeOutcome[Out any](codec Codec, data []byte) (Out, error) {
	var out Out
	// Fast path: a value as encodeValue frames it. The inner slice of any
	// other envelope is not a JSON document (it holds a top-level comma), so
	// it fails here and takes the general path.
	if inner, ok := bytes.CutPrefix(data, []byte(valuePrefix)); ok {
		if inner, ok := bytes.CutSuffix(inner, []byte(valueSuffix)); ok && json.Unmarshal(inner, &out) == nil {
			return out, nil
		}
		out = *new(Out)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return out, fmt.Errorf("lambdaidem: decode stored outcome: %w", err)
	}
	switch {
	case env.Err != nil:
		return out, &ReplayedError{Type: env.Err.Type, Message: env.Err.Message}
	case env.Bin != nil && codec == nil:
		return out, errors.New("lambdaidem: decode stored outcome: it was encoded by an Options.Codec, and none is set")
	case env.Bin != nil:
		if err := codec.Unmarshal(env.Bin, &out); err != nil {
			return out, fmt.Errorf("lambdaidem: decode stored outcome: %w", err)
		}
		return out, nil
	case env.Value == nil:
		return out, errors.New("lambdaidem: decode stored outcome: neither value nor error")
	}
	if err := json.Unmarshal(env.Value, &out); err != nil {
		return out, fmt.Errorf("lambdaidem: decode stored outcome: %w", err)
	}
	return out, nil
}
