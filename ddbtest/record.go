package ddbtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
)

// EnvRecord names the environment variable that makes every [Proxy]
// record the requests it serves: set to a directory, each proxy appends
// the requests that reach its backend (after faults, before corrections),
// one JSON object {"op": ..., "body": ...} a line, to a file of its own
// there. The differential test replays such streams to both worlds
// (testdata/streams).
const EnvRecord = "LAMBDAIDEM_DDB_RECORD"

// fidelityState is the state of the proxy's corrections: the tables it saw
// created (listtables.go) and its recording. Guarded by Proxy.mu, except
// rec, which has its own lock.
type fidelityState struct {
	tables map[string]bool
	rec    *recording
}

// recording is one proxy's request stream file (opened for each request,
// so that a test run with many proxies holds no files open).
type recording struct {
	once sync.Once
	mu   sync.Mutex
	path string
}

// recordedRequest is one line of a request stream.
type recordedRequest struct {
	Op   string          `json:"op"`
	Body json.RawMessage `json:"body"`
}

// record appends one request to the proxy's stream, when $LAMBDAIDEM_DDB_RECORD
// names a directory. A failure to record is not the request's: it is
// dropped silently.
func (p *Proxy) record(op string, body []byte) {
	p.mu.Lock()
	if p.fid.rec == nil {
		p.fid.rec = &recording{}
	}
	rec := p.fid.rec
	p.mu.Unlock()
	rec.once.Do(func() {
		dir := os.Getenv(EnvRecord)
		if dir == "" {
			return
		}
		var b [8]byte
		_, _ = rand.Read(b[:])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return
		}
		rec.path = filepath.Join(dir, hex.EncodeToString(b[:])+".jsonl")
	})
	if rec.path == "" || !json.Valid(body) {
		return
	}
	line, err := json.Marshal(recordedRequest{Op: op, Body: body})
	if err != nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	f, err := os.OpenFile(rec.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	_, _ = f.Write(append(line, '\n'))
	_ = f.Close()
}
