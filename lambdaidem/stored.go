package lambdaidem

import (
	"encoding/json"
	"errors"
	"fmt"
)

// StoredOutcome is an outcome in the form a Store keeps it, for tools that
// read or settle records outside a Guard (the lambdaidem command). Exactly
// one of Value, Bin and Err is set. An outcome protected by an
// Options.Sealer must be opened (sealed) with it, outside this function.
type StoredOutcome struct {
	// Value is the handler's result, as JSON (the default encoding).
	Value json.RawMessage
	// Bin is the handler's result as an Options.Codec encoded it.
	Bin []byte
	// Err is a terminal error: its type name and message.
	Err *ReplayedError
}

// EncodeStoredOutcome returns the stored form of o, byte for byte what a
// Guard with NoCompression commits for the same result: what a duplicate
// then replays (a Guard reads it whatever its compression options). Value
// must be one JSON document.
func EncodeStoredOutcome(o StoredOutcome) ([]byte, error) {
	set := 0
	for _, isSet := range []bool{o.Value != nil, o.Bin != nil, o.Err != nil} {
		if isSet {
			set++
		}
	}
	switch {
	case set != 1:
		return nil, errors.New("lambdaidem: a stored outcome is a value, a codec's bytes or an error, exactly one")
	case o.Err != nil:
		return json.Marshal(envelope{Err: &storedError{Type: o.Err.Type, Message: o.Err.Message}})
	case o.Bin != nil:
		return json.Marshal(envelope{Bin: o.Bin})
	}
	if !json.Valid(o.Value) {
		return nil, errors.New("lambdaidem: stored outcome value is not valid JSON")
	}
	return encodeValue(nil, o.Value)
}

// DecodeStoredOutcome reads a stored outcome, compressed (see
// Options.CompressAbove) or not.
func DecodeStoredOutcome(data []byte) (StoredOutcome, error) {
	var c compressor
	data, err := c.inflate(data)
	if err != nil {
		return StoredOutcome{}, err
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return StoredOutcome{}, fmt.Errorf("lambdaidem: decode stored outcome: %w", err)
	}
	switch {
	case env.Err != nil:
		return StoredOutcome{Err: &ReplayedError{Type: env.Err.Type, Message: env.Err.Message}}, nil
	case env.Bin != nil:
		return StoredOutcome{Bin: env.Bin}, nil
	case env.Value == nil:
		return StoredOutcome{}, errors.New("lambdaidem: decode stored outcome: neither value nor error")
	}
	return StoredOutcome{Value: env.Value}, nil
}
