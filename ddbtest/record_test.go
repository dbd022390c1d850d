package ddbtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// TestRecordStreams: with LAMBDAIDEM_DDB_RECORD set, each proxy writes the
// requests it serves to a file of its own, one JSON line each.
func TestRecordStreams(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ddbtest.EnvRecord, dir)
	for range 2 {
		srv := httptest.NewServer(ddbtest.NewProxy(ddbtest.NewEmulator()))
		c := ddbtest.NewClient(srv.URL)
		table := newTable(t, c)
		put(t, c, table, item("a", "1"))
		if _, err := c.ListTables(context.Background(), &dynamodb.ListTablesInput{Limit: aws.Int32(1)}); err != nil {
			t.Fatalf("ListTables: %v", err)
		}
		srv.Close()
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("%d stream files; want one per proxy, 2", len(files))
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var r struct {
				Op   string
				Body json.RawMessage
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil || len(r.Body) == 0 {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			ops = append(ops, r.Op)
		}
		fh.Close()
		if len(ops) < 3 || ops[0] != "CreateTable" || ops[len(ops)-1] != "ListTables" {
			t.Errorf("%s: ops %v; want CreateTable … PutItem … ListTables", f, ops)
		}
	}

}
