package powertools

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// dialect is how one language writes JSON.
type dialect struct {
	comma, colon string
	number       func(lit string) string
	str          func(b *strings.Builder, s string)
	members      func([]member) []member
}

// write writes v in the dialect.
func (d dialect) write(b *strings.Builder, v value) {
	switch v.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(v.boolean))
	case kindNumber:
		b.WriteString(d.number(v.text))
	case kindString:
		d.str(b, v.text)
	case kindArray:
		b.WriteByte('[')
		for i, item := range v.items {
			if i > 0 {
				b.WriteString(d.comma)
			}
			d.write(b, item)
		}
		b.WriteByte(']')
	case kindObject:
		b.WriteByte('{')
		for i, m := range d.members(v.members) {
			if i > 0 {
				b.WriteString(d.comma)
			}
			d.str(b, m.name)
			b.WriteString(d.colon)
			d.write(b, m.value)
		}
		b.WriteByte('}')
	}
}

// pythonJSON writes v as Python's json.dumps(v, sort_keys=True) does with
// the default separators (", ", ": ") and ensure_ascii=True: integers
// exact, other numbers as repr of their float, members sorted by name.
func pythonJSON(b *strings.Builder, v value) {
	dialect{comma: ", ", colon: ": ", str: pythonString,
		number: func(lit string) string {
			if isInteger(lit) {
				return pythonInt(lit)
			}
			return pythonFloat(parseFloat(lit))
		},
		members: func(in []member) []member {
			members := lastWins(in)
			sort.SliceStable(members, func(i, j int) bool { return members[i].name < members[j].name })
			return members
		},
	}.write(b, v)
}

// writeString writes s quoted with the short escapes every language
// here shares (\\ \n \r \t \b \f), the quote as quote, and every other
// character through rest.
func writeString(b *strings.Builder, s, quote string, rest func(*strings.Builder, rune)) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(quote)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			rest(b, r)
		}
	}
	b.WriteByte('"')
}

// pythonString escapes as json.dumps with ensure_ascii: printable ASCII as
// is, everything else as \uXXXX (lower-case hex, a surrogate pair above
// U+FFFF).
func pythonString(b *strings.Builder, s string) {
	writeString(b, s, `\"`, func(b *strings.Builder, r rune) {
		if r >= 0x20 && r <= 0x7e {
			b.WriteRune(r)
			return
		}
		writeUnicodeEscape(b, r, "%04x")
	})
}

// writeUnicodeEscape writes r as \uXXXX in format (a surrogate pair above
// U+FFFF).
func writeUnicodeEscape(b *strings.Builder, r rune, format string) {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		fmt.Fprintf(b, `\u`+format+`\u`+format, hi, lo)
		return
	}
	fmt.Fprintf(b, `\u`+format, r)
}

// controlEscaper writes a control character as \u00xx in format and
// anything else as is: JSON.stringify (lower-case hex) and Jackson
// (upper-case).
func controlEscaper(format string) func(*strings.Builder, rune) {
	return func(b *strings.Builder, r rune) {
		if r < 0x20 {
			fmt.Fprintf(b, `\u`+format, r)
			return
		}
		b.WriteRune(r)
	}
}

// jsJSON writes v as JSON.stringify(deepSort(v)) does in Powertools
// TypeScript, v being what JSON.parse made of the event: object keys sorted
// by their lower case in UTF-16 order, then laid out as JavaScript lays out
// an object's own keys (array-index keys first, ascending), "__proto__"
// dropped (deepSort's assignment sets the prototype instead), numbers as
// Number::toString of their double.
func jsJSON(b *strings.Builder, v value) {
	dialect{comma: ",", colon: ":", str: jsString, members: jsSortedMembers,
		number: func(lit string) string {
			s, _ := jsNumber(lit)
			return s
		},
	}.write(b, v)
}

// jsSortedMembers is deepSort's key order as JSON.stringify then lists it.
func jsSortedMembers(in []member) []member {
	members := lastWins(in)
	kept := members[:0:0]
	for _, m := range members {
		if m.name != "__proto__" {
			kept = append(kept, m)
		}
	}
	lower := make([][]uint16, len(kept))
	for i, m := range kept {
		lower[i] = utf16.Encode([]rune(strings.ToLower(m.name)))
	}
	idx := make([]int, len(kept))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return lessUTF16(lower[idx[i]], lower[idx[j]]) })
	var indexKeys, others []member
	for _, i := range idx {
		if _, ok := arrayIndex(kept[i].name); ok {
			indexKeys = append(indexKeys, kept[i])
		} else {
			others = append(others, kept[i])
		}
	}
	sort.SliceStable(indexKeys, func(i, j int) bool {
		a, _ := arrayIndex(indexKeys[i].name)
		c, _ := arrayIndex(indexKeys[j].name)
		return a < c
	})
	return append(indexKeys, others...)
}

// lessUTF16 compares as JavaScript's < compares strings: by UTF-16 code
// units.
func lessUTF16(a, b []uint16) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// arrayIndex reports whether name is a canonical array index (0 to
// 2^32-2 without leading zeros), which JavaScript lists before an object's
// other keys.
func arrayIndex(name string) (uint64, bool) {
	if name == "" || len(name) > 10 || (len(name) > 1 && name[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(name, 10, 64)
	if err != nil || n > 1<<32-2 {
		return 0, false
	}
	return n, true
}

// jsString escapes as JSON.stringify: the short escapes, other control
// characters as \u00xx, everything else as is.
func jsString(b *strings.Builder, s string) {
	writeString(b, s, `\"`, controlEscaper("%04x"))
}

// javaJSON writes v as Jackson's JsonNode.toString: compact, members in
// the event's order (a repeated name keeps its first place and last value),
// integers exact, other numbers as Double.toString. Unverified.
func javaJSON(b *strings.Builder, v value) {
	dialect{comma: ",", colon: ":", str: javaString, number: javaNumber, members: lastWins}.write(b, v)
}

// javaNumber is how Jackson prints a number node it parsed from lit.
func javaNumber(lit string) string {
	if isInteger(lit) {
		return pythonInt(lit) // IntNode, LongNode, BigIntegerNode: exact decimal
	}
	return javaDouble(parseFloat(lit))
}

// javaString escapes as Jackson's default: the short escapes, other control
// characters as \u00XX (upper-case hex), everything else as is.
func javaString(b *strings.Builder, s string) {
	writeString(b, s, `\"`, controlEscaper("%04X"))
}

// javaText is what Powertools Java hashes for a selection: a string's text,
// a scalar's Java string, a container's JSON.
func javaText(v value) string {
	switch v.kind {
	case kindString:
		return v.text
	case kindNumber:
		return javaNumber(v.text)
	case kindBool:
		return strconv.FormatBool(v.boolean)
	}
	var b strings.Builder
	javaJSON(&b, v)
	return b.String()
}

// dotnetJSON writes v compactly in the event's order, duplicates kept,
// numbers as written, strings escaped as System.Text.Json's default encoder
// does. Unverified.
func dotnetJSON(b *strings.Builder, v value) {
	keep := func(m []member) []member { return m }
	asWritten := func(lit string) string { return lit }
	dialect{comma: ",", colon: ":", str: dotnetString, number: asWritten, members: keep}.write(b, v)
}

// dotnetString escapes as JavaScriptEncoder.Default: the short escapes,
// and \uXXXX (upper-case hex) for the quote, the HTML-sensitive
// characters, other control characters and everything outside ASCII.
func dotnetString(b *strings.Builder, s string) {
	writeString(b, s, `\u0022`, func(b *strings.Builder, r rune) {
		if r < 0x20 || r > 0x7e || strings.ContainsRune("&'+<>`", r) {
			writeUnicodeEscape(b, r, "%04X")
			return
		}
		b.WriteRune(r)
	})
}

// dotnetText is JsonElement.ToString() of a selection: a string's text, a
// number as written, "True"/"False", "" for null, a container's JSON.
func dotnetText(v value) string {
	switch v.kind {
	case kindString:
		return v.text
	case kindNumber:
		return v.text
	case kindBool:
		if v.boolean {
			return "True"
		}
		return "False"
	case kindNull:
		return ""
	}
	var b strings.Builder
	dotnetJSON(&b, v)
	return b.String()
}

// javaHex prints a digest as Java's String.format("%032x", new
// BigInteger(1, digest)): a hexadecimal number, zero-padded to 32 digits
// only (a SHA-256 digest starting with a zero nibble prints 63 digits).
func javaHex(digest []byte) string {
	s := new(big.Int).SetBytes(digest).Text(16)
	if len(s) < 32 {
		s = strings.Repeat("0", 32-len(s)) + s
	}
	return s
}
