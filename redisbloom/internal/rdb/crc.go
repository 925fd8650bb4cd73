package rdb

import "hash/crc64"

// jonesPoly is the reflected ("reversed") form of the Jones polynomial
// 0xad93d23594c935a9, the form hash/crc64 takes.
const jonesPoly = 0x95ac9329ac4bc9b5

var jonesTable = crc64.MakeTable(jonesPoly)

// CRC64 continues Redis's CRC-64 over p from crc (0 to start), as Redis's
// crc64(crc, p, len) does: the Jones polynomial, reflected, initial value 0,
// no final xor. CRC64(0, []byte("123456789")) is 0xe9c6d914c4b8d9ca.
func CRC64(crc uint64, p []byte) uint64 {
	// hash/crc64 complements the value before and after each update (initial
	// value and final xor of all ones); complementing around it cancels both.
	return ^crc64.Update(^crc, jonesTable, p)
}
