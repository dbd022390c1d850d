package httpevent

import (
	"fmt"
	"strings"
)

// Routes is an HTTP API route table: route keys such as "POST /payments",
// "GET /payments/{id}", "ANY /files/{path+}" or "$default". A request
// matches the most specific route whose method (or ANY) and path segments
// match, as API Gateway chooses; "{name}" matches one segment, a final
// "{name+}" the rest of the path. "$default" matches anything no other
// route matches.
type Routes struct {
	routes []route
}

type route struct {
	key      string
	method   string
	segments []string
}

// NewRoutes parses route keys.
func NewRoutes(keys ...string) (*Routes, error) {
	rs := &Routes{}
	for _, k := range keys {
		if k == "$default" {
			rs.routes = append(rs.routes, route{key: k})
			continue
		}
		method, path, ok := strings.Cut(k, " ")
		if !ok || method == "" || !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("httpevent: route %q is not \"METHOD /path\"", k)
		}
		segs := split(path)
		for i, s := range segs {
			if strings.HasSuffix(s, "+}") && i != len(segs)-1 {
				return nil, fmt.Errorf("httpevent: route %q: a greedy parameter must be last", k)
			}
		}
		rs.routes = append(rs.routes, route{key: k, method: strings.ToUpper(method), segments: segs})
	}
	return rs, nil
}

// Match returns the route key a request matches and its path parameters.
func (rs *Routes) Match(method, path string) (key string, params map[string]string, ok bool) {
	if rs == nil {
		return "", nil, false
	}
	segs := split(path)
	var best *route
	for i := range rs.routes {
		r := &rs.routes[i]
		if r.key == "$default" {
			if best == nil {
				best, params = r, nil
			}
			continue
		}
		if r.method != "ANY" && r.method != strings.ToUpper(method) {
			continue
		}
		if p, ok := r.match(segs); ok && (best == nil || r.moreSpecific(best)) {
			best, params = r, p
		}
	}
	if best == nil {
		return "", nil, false
	}
	return best.key, params, true
}

// moreSpecific reports whether r takes priority over other when both match
// a request, as API Gateway ranks routes: $default last; a route without a
// greedy variable before one with; then, segment by segment, a literal
// before a variable; then a method before ANY. Among equals, the first
// declared wins.
func (r *route) moreSpecific(other *route) bool {
	if (r.key == "$default") != (other.key == "$default") {
		return other.key == "$default"
	}
	if rg, og := r.greedy(), other.greedy(); rg != og {
		return og
	}
	for i := 0; i < len(r.segments) && i < len(other.segments); i++ {
		if rv, ov := isVariable(r.segments[i]), isVariable(other.segments[i]); rv != ov {
			return ov
		}
	}
	return r.method != "ANY" && other.method == "ANY"
}

func (r *route) greedy() bool {
	return len(r.segments) > 0 && strings.HasSuffix(r.segments[len(r.segments)-1], "+}")
}

func isVariable(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

func (r route) match(segs []string) (map[string]string, bool) {
	var params map[string]string
	set := func(name, v string) {
		if params == nil {
			params = map[string]string{}
		}
		params[name] = v
	}
	for i, pat := range r.segments {
		if strings.HasPrefix(pat, "{") && strings.HasSuffix(pat, "+}") {
			if i >= len(segs) {
				return nil, false
			}
			set(pat[1:len(pat)-2], strings.Join(segs[i:], "/"))
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		switch {
		case strings.HasPrefix(pat, "{") && strings.HasSuffix(pat, "}"):
			if segs[i] == "" {
				return nil, false
			}
			set(pat[1:len(pat)-1], segs[i])
		case pat != segs[i]:
			return nil, false
		}
	}
	return params, len(segs) == len(r.segments)
}

// split returns the segments of a path: "/a/b" → ["a", "b"], "/" → [].
func split(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}
