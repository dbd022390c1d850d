package ddbtest

import (
	"net/http"
	"time"
)

// OldItems says what the proxy does with the old item of a failed
// condition that asked for it (ReturnValuesOnConditionCheckFailure=ALL_OLD).
type OldItems int

// The behaviours of ALL_OLD on a failed condition.
const (
	// OldItemsLikeDynamoDB attaches the item as it was before the request,
	// when it existed, to a ConditionalCheckFailedException of PutItem,
	// UpdateItem and DeleteItem and to the transaction cancellation reason of
	// the failed action; an action that did not ask gets none.
	OldItemsLikeDynamoDB OldItems = iota
	// OldItemsLikeEmulator passes the emulator's answer through: minidyn
	// returns the old item for UpdateItem and for a transaction's Update and
	// ConditionCheck, never for PutItem, DeleteItem or a transaction's Put or
	// Delete.
	OldItemsLikeEmulator
	// OldItemsNever strips every old item, as an endpoint that ignores
	// ALL_OLD would: code under test must fall back to reading the item.
	OldItemsNever
)

// Departures lists the emulator departures from DynamoDB that the proxy
// lets through. The zero value lets none through: the proxy behaves like
// DynamoDB. Each field switches one correction off, so that tests can
// exercise both behaviours.
type Departures struct {
	// OldItems chooses the behaviour of ALL_OLD on a failed condition.
	OldItems OldItems
	// TokenReplayCancelled keeps the emulator's handling of a
	// TransactWriteItems replayed with the ClientRequestToken of one that
	// succeeded: it runs again (and is usually cancelled). DynamoDB answers
	// an identical replay within 10 minutes with success and writes
	// nothing.
	TokenReplayCancelled bool
	// PutItemAttributes keeps the new item the emulator returns as the
	// Attributes of every PutItem. DynamoDB returns no Attributes, or the
	// old item when ReturnValues is ALL_OLD.
	PutItemAttributes bool
	// NoTimeToLive passes UpdateTimeToLive and DescribeTimeToLive to the
	// emulator, which does not implement them.
	NoTimeToLive bool
	// ScanSegmentsIgnored keeps the emulator's parallel scan: it ignores
	// Segment and TotalSegments and returns the whole table to every
	// segment. DynamoDB gives each segment a disjoint part (see segments.go).
	ScanSegmentsIgnored bool
	// NoTransactionConflicts serializes every request as the emulator does,
	// so that writes never meet in flight: a held write is only delayed,
	// and nothing is refused for a transaction conflict. DynamoDB refuses a
	// single-item write on an item of an ongoing transaction with
	// TransactionConflictException and cancels a transaction that meets
	// another write on one of its items (see conflicts.go).
	NoTransactionConflicts bool
	// RemoveIgnored keeps the emulator's handling of the REMOVE clause of an
	// UpdateItem: the attributes stay (see remove.go). DynamoDB removes them.
	RemoveIgnored bool
	// NoConsumedCapacity keeps the emulator's answer to
	// ReturnConsumedCapacity, which is none, and charges nothing
	// ([Proxy.Consumed] stays zero). DynamoDB computes capacity by the
	// rules of capacity.go, and returns it when asked.
	NoConsumedCapacity bool
	// NoItemSizeLimit keeps the emulator's acceptance of items over 400 KB
	// (409,600 bytes, sized as DynamoDB sizes them: itemsize.go). DynamoDB
	// refuses a PutItem or a transaction Put of such an item and an
	// UpdateItem whose result is one with a ValidationException, and
	// cancels a transaction whose Update would make one (reason
	// ValidationError; see limits.go).
	NoItemSizeLimit bool
	// NoTransactionLimits keeps the emulator's acceptance of a
	// TransactWriteItems of more than 100 actions, of actions over 4 MB
	// together, or of two actions on one item; DynamoDB refuses each with a
	// ValidationException (limits.go).
	NoTransactionLimits bool
	// LaxPlaceholders keeps the emulator's handling of expression
	// placeholders: an undefined :value reads as NULL (a condition on it can
	// pass, SET writes NULL), an undefined #name as itself, and an unused
	// one is accepted when its name is a prefix of a used one. DynamoDB
	// refuses each with a ValidationException (placeholders.go).
	LaxPlaceholders bool
	// NumbersAsSent keeps the emulator's numbers: neither validated (more
	// than 38 significant digits, magnitudes outside 1E-130 to below
	// 1E+126, text that is no number are stored) nor normalized (00042,
	// 1.0, -0 and 1e2 come back as sent). DynamoDB refuses the first with a
	// ValidationException and returns 42, 1, 0 and 100 (numbers.go).
	NumbersAsSent bool
	// InvalidValuesAccepted keeps the emulator's acceptance of empty sets,
	// sets with duplicate members, key attributes that are an empty string
	// or binary, and NULL values that are not true; DynamoDB refuses each
	// with a ValidationException (values.go).
	InvalidValuesAccepted bool
	// NoPageLimit keeps the emulator's pages: a Scan or Query returns
	// everything up to Limit in one page. DynamoDB stops a page after 1 MB
	// of items read and returns a LastEvaluatedKey (pages.go).
	NoPageLimit bool
	// NoScanCounts keeps the emulator's answer to Scan and Query: no
	// ScannedCount, and items for Select COUNT. DynamoDB returns
	// ScannedCount, and only Count and ScannedCount for COUNT (pages.go).
	NoScanCounts bool
	// FirstCancellationOnly keeps the emulator's cancellation reasons: only
	// the first failing action of a cancelled TransactWriteItems is named,
	// the others get None and no ALL_OLD item. DynamoDB names the reason of
	// every action (cancellations.go).
	FirstCancellationOnly bool
	// NoListTables keeps the emulator's refusal of ListTables (an HTTP 400
	// whose body is not a DynamoDB error). DynamoDB lists the tables in
	// name order, Limit at a time (listtables.go).
	NoListTables bool
}

// Emulator returns the Departures that let every departure through: the
// emulator's own behaviour.
func Emulator() Departures {
	return Departures{OldItems: OldItemsLikeEmulator, TokenReplayCancelled: true, PutItemAttributes: true, NoTimeToLive: true, ScanSegmentsIgnored: true,
		NoTransactionConflicts: true, NoConsumedCapacity: true, RemoveIgnored: true,
		NoItemSizeLimit: true, NoTransactionLimits: true, LaxPlaceholders: true, NumbersAsSent: true, InvalidValuesAccepted: true,
		NoPageLimit: true, NoScanCounts: true, FirstCancellationOnly: true, NoListTables: true}
}

// tokenWindow is how long DynamoDB remembers a ClientRequestToken.
const tokenWindow = 10 * time.Minute

type tokenUse struct {
	request string // the canonical request
	at      time.Time
}

type ttlSetting struct {
	attr    string
	enabled bool
}

// serve applies one request, correcting the departures dep does not keep:
// it refuses what DynamoDB refuses before the backend sees it (limits.go,
// placeholders.go, values.go), normalizes the numbers of the request and
// of the answer (numbers.go), and corrects the answer.
func (p *Proxy) serve(dep Departures, op string, header http.Header, body []byte) response {
	p.record(op, body)
	in, err := object(body)
	if err != nil {
		return p.call(op, header, body)
	}
	if r := p.checkLimits(dep, op, in); r != nil {
		return *r
	}
	if !dep.LaxPlaceholders {
		if r := checkPlaceholders(op, in); r != nil {
			return *r
		}
	}
	body, refusal := p.checkValues(dep, body, op != "TransactWriteItems")
	if refusal != nil {
		return *refusal
	}
	if op == "TransactWriteItems" {
		if r := actionRefusals(dep, list(in["TransactItems"])); r != nil {
			return *r
		}
	}
	return normalizeAnswer(dep, p.correct(dep, op, in, header, body))
}

// correct serves one valid request (in is body decoded) and corrects the
// answer.
func (p *Proxy) correct(dep Departures, op string, in map[string][]byte, header http.Header, body []byte) response {
	switch op {
	case "PutItem", "DeleteItem":
		return p.single(dep, op, header, body)
	case "UpdateItem":
		return p.sizeCheckedUpdate(dep, in, func() response { return p.single(dep, op, header, body) })
	case "TransactWriteItems":
		return p.transact(dep, header, body)
	case "UpdateTimeToLive", "DescribeTimeToLive":
		if !dep.NoTimeToLive {
			return p.timeToLive(op, body)
		}
	case "Scan", "Query":
		return p.page(dep, op, header, body)
	case "ListTables":
		if !dep.NoListTables {
			return p.listTables(body)
		}
	case "CreateTable", "DeleteTable":
		resp := p.call(op, header, body)
		p.noteTable(op, in, resp)
		return resp
	}
	return p.call(op, header, body)
}

// single serves PutItem, UpdateItem and DeleteItem.
func (p *Proxy) single(dep Departures, op string, header http.Header, body []byte) response {
	in, err := object(body)
	if err != nil {
		return p.call(op, header, body)
	}
	wantOld := text(in["ReturnValuesOnConditionCheckFailure"]) == "ALL_OLD"
	putOld := op == "PutItem" && text(in["ReturnValues"]) == "ALL_OLD"
	var old []byte
	if (wantOld && dep.OldItems == OldItemsLikeDynamoDB) || (putOld && !dep.PutItemAttributes) {
		old = p.oldItem(op, in)
	}
	resp := p.call(op, header, body)
	switch {
	case resp.status == http.StatusBadRequest && errorType(resp.body) == "ConditionalCheckFailedException":
		resp.body = edit(resp.body, func(m map[string][]byte) { fixOld(dep, m, wantOld, old) })
	case resp.status == http.StatusOK && op == "UpdateItem" && !dep.RemoveIgnored:
		resp = p.applyRemove(in, resp)
	case resp.status == http.StatusOK && op == "PutItem" && !dep.PutItemAttributes:
		resp.body = edit(resp.body, func(m map[string][]byte) {
			delete(m, "Attributes")
			if putOld && old != nil {
				m["Attributes"] = old
			}
		})
	}
	return resp
}

// fixOld sets the Item of a failed condition as dep says.
func fixOld(dep Departures, m map[string][]byte, wantOld bool, old []byte) {
	switch dep.OldItems {
	case OldItemsLikeDynamoDB:
		delete(m, "Item")
		if wantOld && old != nil {
			m["Item"] = old
		}
	case OldItemsNever:
		delete(m, "Item")
	}
}

// transact serves TransactWriteItems.
func (p *Proxy) transact(dep Departures, header http.Header, body []byte) response {
	in, err := object(body)
	if err != nil {
		return p.call("TransactWriteItems", header, body)
	}
	token := text(in["ClientRequestToken"])
	canon := tokenRequest(body)
	if token != "" && !dep.TokenReplayCancelled {
		if resp, done := p.replayed(token, canon); done {
			return resp
		}
	}
	items := list(in["TransactItems"])
	wantOld := make([]bool, len(items))
	olds := make([][]byte, len(items))
	for i, raw := range items {
		op, action := transactAction(raw)
		wantOld[i] = text(action["ReturnValuesOnConditionCheckFailure"]) == "ALL_OLD"
		if wantOld[i] && dep.OldItems == OldItemsLikeDynamoDB {
			olds[i] = p.oldItem(op, action)
		}
	}
	sized := p.transactionItems(dep, items)
	resp := p.call("TransactWriteItems", header, body)
	if resp.status == http.StatusOK && sized != nil {
		if cancel, over := p.undoOversized(sized); over {
			return cancel
		}
	}
	switch {
	case resp.status == http.StatusOK && token != "" && p.honoursTokens(dep):
		p.mu.Lock()
		p.tokens[token] = tokenUse{request: canon, at: p.now()}
		p.mu.Unlock()
	case resp.status == http.StatusBadRequest && errorType(resp.body) == "TransactionCanceledException":
		resp.body = edit(resp.body, func(m map[string][]byte) {
			reasons := list(m["CancellationReasons"])
			if !dep.FirstCancellationOnly {
				reasons = p.completeReasons(items, reasons)
				m["message"] = cancellationMessage(reasons)
				delete(m, "Message")
			}
			for i, raw := range reasons {
				if i >= len(items) {
					break
				}
				reasons[i] = edit(raw, func(r map[string][]byte) {
					if text(r["Code"]) == "ConditionalCheckFailed" {
						fixOld(dep, r, wantOld[i], olds[i])
					}
				})
			}
			m["CancellationReasons"] = marshal(reasons)
		})
	}
	return resp
}

// tokenRequest is the canonical form of a TransactWriteItems that a replay
// with the same ClientRequestToken must match: every parameter but
// ReturnConsumedCapacity, which a replay may change (it is answered in its
// own mode; see consumed.go).
func tokenRequest(body []byte) string {
	return canonical(edit(body, func(m map[string][]byte) { delete(m, "ReturnConsumedCapacity") }))
}

// replayed answers a TransactWriteItems whose ClientRequestToken succeeded
// within the last 10 minutes, as DynamoDB does.
func (p *Proxy) replayed(token, canon string) (response, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	use, ok := p.tokens[token]
	if !ok {
		return response{}, false
	}
	if p.now().Sub(use.at) >= tokenWindow {
		delete(p.tokens, token)
		return response{}, false
	}
	if use.request != canon {
		return errorResponse(http.StatusBadRequest, "IdempotentParameterMismatchException",
			"The request uses the same client token as a previous, but non-identical request."), true
	}
	return response{status: http.StatusOK, header: jsonHeader(), body: []byte("{}")}, true
}

// oldItem reads, from the emulator, the item a PutItem, UpdateItem,
// DeleteItem or ConditionCheck (in is its input object) addresses. It
// returns nil if there is none.
func (p *Proxy) oldItem(op string, in map[string][]byte) []byte {
	table := in["TableName"]
	key := in["Key"]
	if op == "PutItem" || op == "Put" {
		key = p.keyOf(text(table), in["Item"])
	}
	if key == nil {
		return nil
	}
	resp := p.call("GetItem", nil, marshal(map[string]any{"TableName": rawJSON(table), "Key": rawJSON(key), "ConsistentRead": true}))
	if resp.status != http.StatusOK {
		return nil
	}
	out, err := object(resp.body)
	if err != nil || len(out["Item"]) == 0 || string(out["Item"]) == "{}" || string(out["Item"]) == "null" {
		return nil
	}
	return out["Item"]
}

// keyOf picks the key attributes of table out of item.
func (p *Proxy) keyOf(table string, item []byte) []byte {
	schema := p.keySchema(table)
	attrs, err := object(item)
	if schema == nil || err != nil {
		return nil
	}
	key := map[string]rawJSON{}
	for _, name := range schema {
		v, ok := attrs[name]
		if !ok {
			return nil
		}
		key[name] = v
	}
	return marshal(key)
}

// keySchema returns the key attribute names of table, asking the emulator
// once per table (CreateTable and DeleteTable forget what was asked).
func (p *Proxy) keySchema(table string) []string {
	p.mu.Lock()
	schema, ok := p.schemas[table]
	p.mu.Unlock()
	if ok {
		return schema
	}
	resp := p.call("DescribeTable", nil, marshal(map[string]string{"TableName": table}))
	var out struct {
		Table struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	if resp.status != http.StatusOK || unmarshal(resp.body, &out) != nil {
		return nil
	}
	for _, k := range out.Table.KeySchema {
		schema = append(schema, k.AttributeName)
	}
	p.mu.Lock()
	p.schemas[table] = schema
	p.mu.Unlock()
	return schema
}

// timeToLive answers UpdateTimeToLive and DescribeTimeToLive.
func (p *Proxy) timeToLive(op string, body []byte) response {
	var in struct {
		TableName               string
		TimeToLiveSpecification struct {
			AttributeName string
			Enabled       bool
		}
	}
	if err := unmarshal(body, &in); err != nil {
		return errorResponse(http.StatusBadRequest, "SerializationException", err.Error())
	}
	if resp := p.call("DescribeTable", nil, marshal(map[string]string{"TableName": in.TableName})); resp.status != http.StatusOK {
		return resp
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if op == "UpdateTimeToLive" {
		spec := in.TimeToLiveSpecification
		p.ttl[in.TableName] = ttlSetting{attr: spec.AttributeName, enabled: spec.Enabled}
		return response{status: http.StatusOK, header: jsonHeader(), body: marshal(map[string]any{"TimeToLiveSpecification": spec})}
	}
	desc := map[string]string{"TimeToLiveStatus": "DISABLED"}
	if s := p.ttl[in.TableName]; s.enabled {
		desc = map[string]string{"TimeToLiveStatus": "ENABLED", "AttributeName": s.attr}
	}
	return response{status: http.StatusOK, header: jsonHeader(), body: marshal(map[string]any{"TimeToLiveDescription": desc})}
}
