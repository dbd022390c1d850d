package powertools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// kind is the JSON type of a value.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// value is a decoded JSON value that keeps what the languages' encoders
// need and encoding/json's any loses: a number as written, and an object's
// members in the order written (duplicates included; each encoder resolves
// them as its language's parser does).
type value struct {
	kind    kind
	boolean bool
	text    string // a string's value, a number's literal
	items   []value
	members []member
}

// member is one name and value of an object.
type member struct {
	name  string
	value value
}

// maxDepth bounds the nesting of a selection or an outcome: the decoder
// recurses once per level.
const maxDepth = 1000

// errDepth marks a document nested deeper than maxDepth.
var errDepth = errors.New("nested too deeply")

// parse decodes one JSON document into a value; anything after it but
// white space is an error.
func parse(doc []byte) (value, error) {
	if err := loneSurrogate(doc); err != nil {
		return value{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return value{}, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// encodeSelection turns what a caller selected into a value: a
// json.RawMessage (or []byte holding JSON) is parsed as written, anything
// else is encoded by encoding/json first (map keys then come sorted).
func encodeSelection(v any) (value, error) {
	var doc []byte
	switch x := v.(type) {
	case json.RawMessage:
		doc = x
	case []byte:
		doc = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return value{}, err
		}
		doc = b
	}
	return parse(doc)
}

func decodeValue(dec *json.Decoder, depth int) (value, error) {
	if depth > maxDepth {
		return value{}, errDepth
	}
	tok, err := dec.Token()
	if err != nil {
		return value{}, err
	}
	switch t := tok.(type) {
	case nil:
		return value{kind: kindNull}, nil
	case bool:
		return value{kind: kindBool, boolean: t}, nil
	case json.Number:
		return value{kind: kindNumber, text: string(t)}, nil
	case string:
		return value{kind: kindString, text: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := value{kind: kindArray, items: []value{}}
			for dec.More() {
				item, err := decodeValue(dec, depth+1)
				if err != nil {
					return value{}, err
				}
				v.items = append(v.items, item)
			}
			if _, err := dec.Token(); err != nil {
				return value{}, err
			}
			return v, nil
		case '{':
			v := value{kind: kindObject, members: []member{}}
			for dec.More() {
				nameTok, err := dec.Token()
				if err != nil {
					return value{}, err
				}
				name, ok := nameTok.(string)
				if !ok {
					return value{}, fmt.Errorf("object name %v is not a string", nameTok)
				}
				item, err := decodeValue(dec, depth+1)
				if err != nil {
					return value{}, err
				}
				v.members = append(v.members, member{name: name, value: item})
			}
			if _, err := dec.Token(); err != nil {
				return value{}, err
			}
			return v, nil
		}
	}
	return value{}, fmt.Errorf("unexpected JSON token %v", tok)
}

// lastWins returns an object's members with each name once, at its first
// position, holding its last value: what a JavaScript or Python parser
// builds from a document naming a member twice.
func lastWins(members []member) []member {
	index := make(map[string]int, len(members))
	out := make([]member, 0, len(members))
	for _, m := range members {
		if i, ok := index[m.name]; ok {
			out[i].value = m.value
			continue
		}
		index[m.name] = len(out)
		out = append(out, m)
	}
	return out
}

// isInteger reports whether a number's literal has neither a fraction nor
// an exponent: Python, Jackson and .NET read it as an integer.
func isInteger(lit string) bool {
	return !bytes.ContainsAny([]byte(lit), ".eE")
}

// loneSurrogate reports a \u escape of a UTF-16 surrogate without its
// pair in doc's strings. Python's json and JavaScript's JSON keep such a
// string as it is and write the escape back; encoding/json replaces it
// with U+FFFD, so the text hashed here would not be the text Powertools
// hashed: refused rather than a key Powertools never wrote.
func loneSurrogate(doc []byte) error {
	inString := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(doc) && doc[i+1] == 'u' {
				r, ok := hex4(doc, i+2)
				switch {
				case ok && r >= 0xD800 && r < 0xDC00:
					lo, okLo := rune(0), false
					if i+7 < len(doc) && doc[i+6] == '\\' && doc[i+7] == 'u' {
						lo, okLo = hex4(doc, i+8)
					}
					if !okLo || lo < 0xDC00 || lo > 0xDFFF {
						return fmt.Errorf("a lone UTF-16 surrogate escape at byte %d, which this package cannot hash as Powertools does", i)
					}
					i += 11
					continue
				case ok && r >= 0xDC00 && r <= 0xDFFF:
					return fmt.Errorf("a lone UTF-16 surrogate escape at byte %d, which this package cannot hash as Powertools does", i)
				}
			}
			i++ // the escaped character
		}
	}
	return nil
}

// hex4 is the value of the four hex digits at doc[i:].
func hex4(doc []byte, i int) (rune, bool) {
	if i+4 > len(doc) {
		return 0, false
	}
	var r rune
	for _, c := range doc[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
