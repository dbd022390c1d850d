package lambdaidem

import "context"

// Codec encodes a handler's result for storage and decodes it for a
// replay; see Options.Codec. Marshal gets the result; Unmarshal gets a
// pointer to a zero result to fill in. The functions of encoding/json, of
// encoding/gob's wrappers, and of most serialization libraries fit with a
// one-line adapter. It must be safe for concurrent use.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// Sealer protects stored outcomes, for example by encrypting them; see
// Options.Sealer. Seal runs on every outcome before it is stored and Open
// on every stored outcome before it is decoded, each with the record key.
// A Sealer should bind what it seals to the key (as authenticated data), so
// that bytes copied from one record into another do not open. It must be
// safe for concurrent use.
type Sealer interface {
	Seal(ctx context.Context, key string, plaintext []byte) ([]byte, error)
	Open(ctx context.Context, key string, sealed []byte) ([]byte, error)
}
