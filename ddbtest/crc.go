package ddbtest

import (
	"hash/crc32"
	"strconv"
)

// crcHeader carries the CRC32 (IEEE) of a DynamoDB response body. DynamoDB
// sends it with every response, and the AWS SDKs check the body against it
// (aws-sdk-go-v2 logs a warning for a mismatch, and for a missing header,
// through the client's logger). The emulator sends none, and the proxy
// edits bodies, so the proxy sets it on every response it writes.
const crcHeader = "X-Amz-Crc32"

func bodyCRC(body []byte) string {
	return strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10)
}
