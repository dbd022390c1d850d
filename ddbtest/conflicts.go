package ddbtest

import (
	"net/http"
)

// Transaction conflicts, as the DynamoDB Developer Guide describes them
// ("Transaction conflict handling in DynamoDB",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
//
//   - a PutItem, UpdateItem or DeleteItem on an item that an ongoing
//     TransactWriteItems includes is rejected with HTTP 400
//     TransactionConflictException;
//   - a TransactWriteItems that includes an item of another ongoing
//     TransactWriteItems is cancelled (TransactionCanceledException) with
//     the reason TransactionConflict for that item;
//   - and, items not being locked during a transaction, a transaction
//     whose item is being written by a single-item write is cancelled the
//     same way.
//
// A write is in flight from the moment it starts executing until it is
// applied. The emulator executes one request at a time, so without a hold
// no two writes are ever in flight together; a [Rule] with a Hold keeps a
// write in flight for that long, outside the serialization, so that other
// requests meet it. Requests waiting for their turn are not in flight:
// DynamoDB checks conflicts when a write reaches the item. Reads
// (GetItem, Scan) never conflict: they see the last committed state
// (read-committed isolation). Two single-item writes on one item do not
// conflict either: DynamoDB serializes them, and so does the proxy (the
// later one waits for a held one).

// flight is one write in flight: its items, and how it conflicts.
type flight struct {
	transaction bool
	token       string        // a transaction's ClientRequestToken
	items       []string      // table + canonical key of each item
	done        chan struct{} // closed when the write was applied
}

// itemID names one item: its table and its key, canonical.
func itemID(table string, key []byte) string {
	return table + "\x00" + canonical(key)
}

// isWrite reports whether op writes items, and so can conflict.
func isWrite(op string) bool {
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems":
		return true
	}
	return false
}

// itemsOf lists the items a write addresses, in request order (one per
// TransactItems element for a transaction). It calls the emulator for a
// table's key schema, so it runs in the serialization.
func (p *Proxy) itemsOf(op string, body []byte) []string {
	in, err := object(body)
	if err != nil {
		return nil
	}
	if op != "TransactWriteItems" {
		return []string{p.itemOf(op, in)}
	}
	raws := list(in["TransactItems"])
	items := make([]string, len(raws))
	for i, raw := range raws {
		action, a := transactAction(raw)
		items[i] = p.itemOf(action, a)
	}
	return items
}

// itemOf names the item one write action (in is its input object)
// addresses; "" if it cannot tell.
func (p *Proxy) itemOf(op string, in map[string][]byte) string {
	table := text(in["TableName"])
	key := in["Key"]
	if op == "PutItem" || op == "Put" {
		key = p.keyOf(table, in["Item"])
	}
	if table == "" || key == nil {
		return ""
	}
	return itemID(table, key)
}

// begin registers the write op on items as in flight, or answers it with
// the conflict DynamoDB would report. wait is set when the write must
// first wait for a held single-item write on one of its items. Called
// with p.serial held.
func (p *Proxy) begin(op, token string, items []string) (f *flight, refusal *response, wait <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tx := op == "TransactWriteItems"
	if tx && token != "" {
		for _, other := range p.flights {
			if other.transaction && other.token == token {
				r := errorResponse(http.StatusBadRequest, "TransactionInProgressException",
					"The transaction with the given request token is already in progress.")
				return nil, &r, nil
			}
		}
	}
	conflicts := make([]bool, len(items))
	var found bool
	for i, item := range items {
		if item == "" {
			continue
		}
		for _, other := range p.flights {
			if !other.holds(item) {
				continue
			}
			if !tx && !other.transaction {
				return nil, nil, other.done // single after single: DynamoDB serializes them
			}
			conflicts[i], found = true, true
		}
	}
	if found {
		p.conflicts++
		r := conflictResponse(tx, conflicts)
		return nil, &r, nil
	}
	f = &flight{transaction: tx, token: token, items: items, done: make(chan struct{})}
	p.flights = append(p.flights, f)
	return f, nil, nil
}

// end takes f out of flight.
func (p *Proxy) end(f *flight) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, other := range p.flights {
		if other == f {
			p.flights = append(p.flights[:i], p.flights[i+1:]...)
			break
		}
	}
	close(f.done)
}

func (f *flight) holds(item string) bool {
	for _, it := range f.items {
		if it == item {
			return true
		}
	}
	return false
}

// InFlight returns how many writes are in flight: executing, or held by a
// [Rule] before they are applied.
func (p *Proxy) InFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.flights)
}

// Conflicts returns how many writes the proxy refused for a transaction
// conflict (single-item writes answered TransactionConflictException and
// cancelled transactions), since it started.
func (p *Proxy) Conflicts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conflicts
}

// conflictResponse is DynamoDB's answer to a write that met another one in
// flight: TransactionConflictException for a single-item write, a
// TransactionCanceledException with reason TransactionConflict on each
// conflicting item (None on the others) for a transaction.
func conflictResponse(tx bool, conflicts []bool) response {
	if !tx {
		return errorResponse(http.StatusBadRequest, "TransactionConflictException",
			"Transaction is ongoing for the item")
	}
	reasons := make([]map[string]string, len(conflicts))
	codes := make([]byte, 0, 16*len(conflicts))
	for i, c := range conflicts {
		code := "None"
		reasons[i] = map[string]string{"Code": code}
		if c {
			code = "TransactionConflict"
			reasons[i] = map[string]string{"Code": code, "Message": "Transaction is ongoing for the item"}
		}
		if i > 0 {
			codes = append(codes, ", "...)
		}
		codes = append(codes, code...)
	}
	return response{status: http.StatusBadRequest, header: jsonHeader(), body: marshal(map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + string(codes) + "]",
		"CancellationReasons": reasons,
	})}
}

// apply serves one request that a fault did not refuse: it holds it for
// hold, then applies it in the serialization. Unless dep turns conflicts
// off, a write is in flight from the start of its hold until it is
// applied, and meets the writes in flight on its items as DynamoDB would.
func (p *Proxy) apply(dep Departures, op string, header http.Header, body []byte, hold hold) response {
	if dep.NoTransactionConflicts || !isWrite(op) {
		hold.wait()
		p.serial.Lock()
		defer p.serial.Unlock()
		return p.metered(dep, op, header, body)
	}
	p.serial.Lock()
	defer p.serial.Unlock()
	token := ""
	if op == "TransactWriteItems" {
		in, _ := object(body)
		token = text(in["ClientRequestToken"])
		if token != "" && p.honoursTokens(dep) {
			if p.tokenSucceeded(token, tokenRequest(body)) {
				return p.metered(dep, op, header, body) // an identical replay of a finished transaction
			}
		}
	}
	items := p.itemsOf(op, body)
	for {
		f, refusal, wait := p.begin(op, token, items)
		if refusal != nil {
			return *refusal
		}
		if wait != nil {
			p.serial.Unlock()
			<-wait
			p.serial.Lock()
			continue
		}
		if hold.some() {
			p.serial.Unlock()
			hold.wait()
			p.serial.Lock()
		}
		resp := p.metered(dep, op, header, body)
		p.end(f)
		return resp
	}
}
