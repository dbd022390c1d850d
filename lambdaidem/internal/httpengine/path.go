package httpengine

import "strings"

// NormalizePath is the path a request without a route (a Function URL, an
// HTTP API's $default route) is scoped and fingerprinted by. Spellings of a
// path that a server would take for one resource become one:
//
//   - a percent-encoded unreserved character (letter, digit, '-', '.', '_',
//     '~') is decoded, and the hex digits of every other escape are upper
//     case (RFC 3986 §6.2.2.1–2): "/%70ayments" is "/payments", "%2f" is
//     "%2F" (an encoded slash stays encoded: it is not a separator);
//   - empty segments are dropped ("//payments" and "/payments/" are
//     "/payments");
//   - "." and ".." segments are resolved (RFC 3986 §5.2.4), never above the
//     root.
//
// Letter case is kept: paths are case-sensitive. The result starts with '/'.
// apigw.Request.Route documents the same rules.
func NormalizePath(p string) string {
	var segs []string
	for seg := range strings.SplitSeq(p, "/") {
		seg = normalizeEscapes(seg)
		switch seg {
		case "", ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, seg)
		}
	}
	return "/" + strings.Join(segs, "/")
}

// normalizeEscapes decodes the escapes of unreserved characters in s and
// upper-cases the hex digits of the others. A '%' not followed by two hex
// digits is kept as is.
func normalizeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(s[i])
			continue
		}
		c := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
		}
		i += 2
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0
}
