package apigw

import (
	"net/http"
	"net/textproto"
	"strings"
)

// mergeHeaders joins single- and multi-valued header maps the way API
// Gateway does: a name in both keeps the multi-valued list. Names that
// differ only in case are one header: their values are kept together, so
// a header sent twice under two spellings still shows twice.
func mergeHeaders(single map[string]string, multi map[string][]string) http.Header {
	h := http.Header{}
	for name, values := range multi {
		k := textproto.CanonicalMIMEHeaderKey(name)
		h[k] = append(h[k], values...)
	}
	inMulti := make(map[string]bool, len(h))
	for k := range h {
		inMulti[k] = true
	}
	for name, v := range single {
		if k := textproto.CanonicalMIMEHeaderKey(name); !inMulti[k] {
			h[k] = append(h[k], v)
		}
	}
	return h
}

// single flattens h into one value per name, joining repeats with ", ".
func single(h http.Header) map[string]string {
	m := make(map[string]string, len(h))
	for name, values := range h {
		m[name] = strings.Join(values, ", ")
	}
	return m
}
