package powertools

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// shortest returns the shortest decimal digits that read back as f (f > 0
// and finite) and the position of the decimal point: f = 0.digits × 10^point.
// Python's repr, JavaScript's Number::toString and Java's Double.toString
// (JDK 19 and later) all start from these digits.
func shortest(f float64) (digits string, point int) {
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	digits = strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	return digits, e + 1
}

// parseFloat reads a JSON number literal as a double, as every language
// here does for a non-integer; a literal beyond the double range reads as
// ±Inf, as in Python and JavaScript.
func parseFloat(lit string) float64 {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// pythonFloat is repr(float) (Python 3): the shortest digits, positional
// with ".0" when the point falls within -4 < point <= 16, else scientific
// with a signed exponent of at least two digits. json.dumps writes an
// infinity as "Infinity" and NaN as "NaN".
func pythonFloat(f float64) string {
	sign, special := signed(&f)
	if special != "" {
		return special
	}
	d, n := shortest(f)
	if n <= -4 || n > 16 {
		return sign + mantissa(d) + "e" + exponent(n-1, 2, true)
	}
	return sign + positional(d, n)
}

// positional writes 0.d × 10^n without an exponent and with at least one
// fraction digit (".0"), as Python's repr and Java's Double.toString do.
func positional(d string, n int) string {
	switch {
	case n <= 0:
		return "0." + strings.Repeat("0", -n) + d
	case n >= len(d):
		return d + strings.Repeat("0", n-len(d)) + ".0"
	default:
		return d[:n] + "." + d[n:]
	}
}

// pythonInt is an integer literal as Python's int prints it: exact, with
// no sign on zero.
func pythonInt(lit string) string {
	var n big.Int
	if _, ok := n.SetString(lit, 10); !ok {
		return lit
	}
	return n.String()
}

// jsNumber is Number::toString (ECMA-262) of the double a literal reads
// as: positional for 1e-7 <= |x| < 1e21, else scientific ("1e+21"); zero is
// "0" whatever its sign. JSON.stringify writes a non-finite number as
// "null"; ok is false for one (marshall refuses it).
func jsNumber(lit string) (s string, ok bool) {
	f := parseFloat(lit)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null", false
	}
	if f == 0 {
		return "0", true
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	d, n := shortest(f)
	k := len(d)
	switch {
	case k <= n && n <= 21:
		return sign + d + strings.Repeat("0", n-k), true
	case 0 < n && n <= 21:
		return sign + d[:n] + "." + d[n:], true
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + d, true
	default:
		return sign + mantissa(d) + "e" + exponent(n-1, 1, true), true
	}
}

// javaDouble is Double.toString (JDK 19 and later, shortest digits):
// positional with at least one fraction digit for 1e-3 <= |x| < 1e7, else
// "d.dddE±n" with at least one fraction digit and no "+" on the exponent.
func javaDouble(f float64) string {
	sign, special := signed(&f)
	if special != "" {
		return special
	}
	d, n := shortest(f)
	if f >= 1e-3 && f < 1e7 {
		return sign + positional(d, n)
	}
	m := d[:1] + "." + d[1:]
	if len(d) == 1 {
		m += "0"
	}
	return sign + m + "E" + exponent(n-1, 1, false)
}

// signed takes the sign off *f and returns it, or the whole text of a
// value Python and Java print alike ("NaN", "Infinity", "-Infinity",
// "0.0", "-0.0") as special.
func signed(f *float64) (sign, special string) {
	switch {
	case math.IsNaN(*f):
		return "", "NaN"
	case math.IsInf(*f, 1):
		return "", "Infinity"
	case math.IsInf(*f, -1):
		return "", "-Infinity"
	}
	if math.Signbit(*f) {
		sign = "-"
		*f = -*f
	}
	if *f == 0 {
		return sign, sign + "0.0"
	}
	return sign, ""
}

// mantissa is "d" or "d.ddd".
func mantissa(d string) string {
	if len(d) == 1 {
		return d
	}
	return d[:1] + "." + d[1:]
}

// exponent prints e with at least width digits and a sign ("+" only when
// plus is set).
func exponent(e, width int, plus bool) string {
	sign := ""
	switch {
	case e < 0:
		sign = "-"
		e = -e
	case plus:
		sign = "+"
	}
	s := strconv.Itoa(e)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return sign + s
}
