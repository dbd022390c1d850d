package lambdaidem_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// gobCodec is a Codec over encoding/gob, whose round trip keeps the
// concrete type of a number held in an interface.
type gobCodec struct{}

func (gobCodec) Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(v)
	return buf.Bytes(), err
}

func (gobCodec) Unmarshal(data []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(data)).Decode(v)
}

// replayOf runs fn once for key and returns what a duplicate gets.
func replayOf[Out any](t *testing.T, g *lambdaidem.Guard, key string, fn func(context.Context) (Out, error)) (Out, error) {
	t.Helper()
	c := lambdaidem.Call[Out]{Operation: "Op", Key: key, Fingerprint: "fp"}
	if _, err := lambdaidem.Do(context.Background(), g, c, fn); err != nil {
		var re *lambdaidem.ReplayedError
		if !errors.As(err, &re) && !isTerminalErr(err) {
			t.Fatal(err)
		}
	}
	return lambdaidem.Do(context.Background(), g, c, func(context.Context) (Out, error) {
		t.Fatal("the duplicate ran")
		var zero Out
		return zero, nil
	})
}

func isTerminalErr(err error) bool {
	var t interface{ Terminal() bool }
	return errors.As(err, &t)
}

// The default codec is JSON, and a replay gets what JSON keeps: a number
// in an interface comes back as a float64. A Codec chosen for the result
// keeps it.
func TestCodecDecidesWhatAReplayKeeps(t *testing.T) {
	result := func(context.Context) (map[string]any, error) { return map[string]any{"n": 7}, nil }

	byJSON, err := replayOf(t, newFixture(t).guard, "k", result)
	if err != nil || byJSON["n"] != float64(7) {
		t.Fatalf("JSON replay = %#v, %v; want n as float64(7) (the documented caveat)", byJSON, err)
	}
	byGob, err := replayOf(t, newFixture(t, func(o *lambdaidem.Options) { o.Codec = gobCodec{} }).guard, "k", result)
	if err != nil || byGob["n"] != 7 {
		t.Fatalf("gob replay = %#v, %v; want n as int 7", byGob, err)
	}
}

// A terminal error is stored as its type and message whatever the codec.
func TestCodecKeepsTerminalErrors(t *testing.T) {
	g := newFixture(t, func(o *lambdaidem.Options) { o.Codec = gobCodec{} }).guard
	_, err := replayOf(t, g, "k", func(context.Context) (int, error) { return 0, &declinedError{"expired"} })
	var re *lambdaidem.ReplayedError
	if !errors.As(err, &re) || re.Type != "declinedError" || re.Message != "declined: expired" {
		t.Fatalf("replay = %#v; want the declinedError replayed", err)
	}
}

// An outcome stored by a Codec cannot be read without it: the replay
// fails loudly rather than answering with a zero value.
func TestOutcomeOfACodecNeedsTheCodec(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.Codec = gobCodec{} })
	if _, err := replayOf(t, f.guard, "k", func(context.Context) (int, error) { return 5, nil }); err != nil {
		t.Fatal(err)
	}
	plain := newFixtureWith(t, f.store)
	_, err := lambdaidem.Do(context.Background(), plain.guard, lambdaidem.Call[int]{Operation: "Op", Key: "k", Fingerprint: "fp"},
		func(context.Context) (int, error) { t.Fatal("ran"); return 0, nil })
	if err == nil || !strings.Contains(err.Error(), "Codec") {
		t.Fatalf("replay without the codec = %v; want an error naming the Codec", err)
	}
}

// tagSealer is a stand-in Sealer that binds the record key: it prefixes
// the key and reverses the bytes. Real sealing (AES-GCM under a KMS data
// key) is tested in the seal package.
type tagSealer struct {
	seals, opens int
	keys         []string
}

func (s *tagSealer) Seal(_ context.Context, key string, p []byte) ([]byte, error) {
	s.seals++
	s.keys = append(s.keys, key)
	return reverse(append([]byte(key+"|"), p...)), nil
}

func (s *tagSealer) Open(_ context.Context, key string, b []byte) ([]byte, error) {
	s.opens++
	s.keys = append(s.keys, key)
	p, ok := bytes.CutPrefix(reverse(b), []byte(key+"|"))
	if !ok {
		return nil, errors.New("sealed for another record")
	}
	return p, nil
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}

// Every stored outcome goes through the Sealer, under its record key; the
// store never holds the plain outcome.
func TestSealerSealsEveryStoredOutcome(t *testing.T) {
	s := &tagSealer{}
	f := newFixture(t, func(o *lambdaidem.Options) { o.Sealer = s })
	got, err := replayOf(t, f.guard, "k", func(context.Context) (string, error) { return "card 4242", nil })
	if err != nil || got != "card 4242" || s.seals != 1 || s.opens != 1 {
		t.Fatalf("replay = %q, %v after %d seals, %d opens; want the value, sealed once and opened once", got, err, s.seals, s.opens)
	}
	rec := f.onlyRecord(t)
	if bytes.Contains(rec.Outcome, []byte("4242")) {
		t.Fatalf("stored outcome %q holds the plain value", rec.Outcome)
	}
	if s.keys[0] != rec.Key || s.keys[1] != rec.Key {
		t.Fatalf("sealed and opened under %q; want the record key %q both times", s.keys, rec.Key)
	}
	if _, err := s.Open(context.Background(), "lambdaidem#other", rec.Outcome); err == nil {
		t.Fatal("an outcome opened under another record key")
	}
}
