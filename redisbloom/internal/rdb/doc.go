// Package rdb is the part of Redis's RDB encoding that a DUMP payload of a
// module value is made of: the payload's footer and CRC-64, lengths,
// strings (raw, integer, LZF-compressed), and a module value's typed
// fields. Package redisbloom writes and reads RedisBloom's cuckoo filters
// (module type MBbloomCF) with it, so that Redis 7 with RedisBloom
// RESTOREs what we DUMP and we RESTORE what it DUMPs. It knows nothing of
// cuckoo filters: which fields a value has, in which order, is the
// caller's.
//
// # Payload
//
// A payload is a body, then a footer: the RDB version (2 bytes) and the
// CRC-64 of everything before the CRC (8 bytes), both little-endian. The
// body is an object type byte and the object.
//
// Redis writes its own RDB version (Redis 7.0 writes 10, 7.2 11, 7.4 12,
// 8.0 to 8.6 13), and RESTORE accepts any version up to its own and
// refuses a newer one: checked against Redis 7.0.15 (0, 1, 9 and 10
// accepted, 11 and above refused) and Redis 8.6.3 (up to 13 accepted, 14
// and above refused). A payload's version does not change how RESTORE
// reads a module value: Redis reads the type byte, the module id and
// hands the rest to the module, whatever the footer says, and the formats
// RDB 11 to 13 added are other types' (sets and hashes as listpacks,
// hashes with expiring fields). A RedisBloom filter's payload from Redis
// 8.6.3 with RedisBloom 8.6.2 is byte for byte the payload Redis 7.0.15
// with RedisBloom 2.6.28 writes of the same filter, but for the footer
// (package redisbloom's Redis 8 fixtures).
//
// So SplitPayload accepts 0 to MaxVersion (13), taking what any Redis
// from 7.0 to 8.6 writes, and AppendFooter writes Version (10), which
// every one of them reads: a payload of 13 would be refused by Redis 7.0.
// Redis answers "DUMP payload version or checksum are wrong" to a payload
// shorter than a footer, of a newer version, or of a wrong checksum;
// SplitPayload returns a distinct error for each, all wrapping
// ErrBadPayload, whose text is Redis's. A CRC-64 field of 0 is a checksum
// not computed to Redis 8 (written only between its own nodes when it
// moves slots), and a wrong one to Redis 7.0; SplitPayload takes it, as
// the newest Redis does, and a server answering as Redis 7.0 refuses it
// itself (Unchecked). Every field after it is checked as it is read, as
// for any payload.
//
// The footer is only checked, never cut off: RESTORE reads the value
// from the payload's first byte to the value's own end, wherever the
// footer begins, and leaves any bytes after that end unread. Checked
// against Redis 8.6.3: a value followed by junk and a right footer is
// taken, with a checksum or a CRC of 0, and so is a value whose last byte
// (the module's EOF) is the footer's first. A payload cut short is thus
// refused by its footer, unless its last ten bytes read as a version up
// to 13 and a CRC of 0 and the value ends before the cut: a filter whose
// slots end in zeros, cut just after its EOF, for one (Redis 8 takes it).
// So a Reader is given the whole payload, not SplitPayload's body.
//
// The CRC-64 is Redis's ("Jones"): reflected, polynomial
// 0xad93d23594c935a9, initial value 0, no final xor; the CRC of
// "123456789" is 0xe9c6d914c4b8d9ca. CRC64 computes it with hash/crc64 and
// a table of that polynomial, complementing around hash/crc64's own
// initial value and final xor.
//
// # Lengths
//
// A length's first byte says its form:
//
//	00xxxxxx                 6 bits
//	01xxxxxx yyyyyyyy        14 bits, big-endian
//	10000000 + 4 bytes       32 bits, big-endian
//	10000001 + 8 bytes       64 bits, big-endian
//	11xxxxxx                 not a length: a string in encoding xxxxxx
//
// AppendLen writes the shortest form; ReadLen reads any of the four, as
// Redis does, and refuses other 10xxxxxx bytes and, where a length is
// expected, an 11xxxxxx byte (Redis would take its low 6 bits).
//
// # Strings
//
// A string is a length and its bytes, or an 11xxxxxx byte and:
//
//	0: int8, 1: int16, 2: int32    the integer, little-endian; the string
//	                               is its decimal form
//	3: LZF                         the compressed length, the length, and
//	                               the LZF stream
//
// AppendString chooses as Redis's rdbSaveRawString does (with
// rdbcompression on, the default): an integer encoding for a decimal
// string of at most 11 bytes that reads back the same and fits 32 bits;
// LZF for a string longer than 20 bytes when the stream is at least 4
// bytes shorter; the bytes otherwise. Its output is Redis's, byte for
// byte: the tests compare it with Redis's DUMP of hundreds of strings.
// ReadString reads all three, within a limit the caller gives.
//
// # LZF
//
// An LZF stream is instructions, each led by a control byte c: c < 32 is
// a literal run of the next c+1 bytes; otherwise it is a back-reference of
// n+2 bytes (n = c>>5, plus the next byte if n is 7, so 3 to 264 bytes)
// from ((c&31)<<8 | the next byte) + 1 bytes back in the output, copied
// byte by byte, so it may overlap itself. AppendLZF makes the stream
// Redis's bundled liblzf makes (the same greedy parse, hash, window of
// 8192 bytes, quirks and conservative space checks), because Redis stores
// a string compressed only if that stream fits in 4 bytes less than the
// string, and we want the same bytes as Redis. DecompressLZF accepts any
// valid stream, and only one that fills exactly the stated length: an
// instruction cut short, a back-reference before the start, a stream that
// would write past the end or stops short are errors. The format is small
// enough to keep here (lzf.go) rather than take a dependency.
//
// # Module values
//
// A module value's body is TypeModule (7, Redis's RDB_TYPE_MODULE_2), its
// ModuleID as a length, the fields the module saved, each behind an opcode
// written as a length, and the EOF opcode:
//
//	0 EOF      the end
//	1 SINT     a length holding an int64's bits      (RedisModule_SaveSigned)
//	2 UINT     a length                              (RedisModule_SaveUnsigned)
//	3 FLOAT    4 bytes, IEEE 754, little-endian      (RedisModule_SaveFloat)
//	4 DOUBLE   8 bytes, IEEE 754, little-endian      (RedisModule_SaveDouble)
//	5 STRING   a string, chosen as AppendString does (RedisModule_SaveStringBuffer)
//
// The 64-bit ModuleID packs the module type's 9-character name, 6 bits a
// character from "A-Z a-z 0-9 - _" in that order (A is 0, _ is 63), first
// character highest, then a 10-bit encoding version: "MBbloomCF" is
// M=12 B=1 b=27 l=37 o=40 o=40 m=38 C=2 F=5, and at version 4 the id is
// 0x3016e5a289821404.
//
// # Stricter than Redis
//
// The Reader refuses some bytes Redis 7.0 reads, none of which Redis
// writes: an 11xxxxxx byte where a length (or an opcode) belongs, which
// Redis reads as its low 6 bits (a UINT opcode written 0xc2 is restored);
// an LZF string of length 0; and object type 6, the module format of
// Redis 4.0's release candidates, whose fields have no opcodes (Redis
// 7.0.15 reads one: given a filter's type-7 bytes under type 6, RedisBloom
// misread them, failed an assertion, and the server exited).
//
// # A worked example
//
// Redis 7.0.15 with RedisBloom 2.6.28 answers DUMP, after CF.RESERVE k
// 1000, CF.ADD k foo and CF.ADD k bar, with these 69 bytes
// (testdata/cf-foo-bar.bin):
//
//	07                          TypeModule
//	81 3016e5a289821404         the ModuleID, a 64-bit length: MBbloomCF/4
//	02 01                       UINT 1      sub-filters
//	02 42 00                    UINT 512    buckets (14-bit form: 0x0200)
//	02 02                       UINT 2      items
//	02 00                       UINT 0      deletes
//	02 02                       UINT 2      bucket size
//	02 14                       UINT 20     max iterations
//	02 01                       UINT 1      expansion
//	02 42 00                    UINT 512    the first sub-filter's buckets
//	05 c3 19 44 00              STRING, LZF: 25 bytes (0x19) expanding to
//	                            1024 (0x4400, 14-bit form); positions
//	                            below count from 0
//	   01 00 00                   literal 00 00
//	   e0 ff 00                   264 bytes from 1 back: zeros to 265
//	   e0 ef 00                   248 bytes from 1 back: zeros to 513
//	   00 d9                      literal d9: a fingerprint at 514
//	   e0 ef f8                   248 bytes from 249 back: zeros to 762
//	   01 00 14                   literal 00 14: a fingerprint at 764
//	   20 03                      3 bytes from 4 back
//	   e0 f5 00                   254 bytes from 1 back
//	   01 00 00                   literal 00 00, the 1024th byte
//	00                          EOF
//	0a 00                       RDB version 10
//	23 f5 a0 f2 f1 c6 f4 27     CRC-64 of the 61 bytes before it
//
// The names of the UINT fields are RedisBloom's (the order CFRdbSave
// writes them in); to this package they are seven UINTs, then a UINT and a
// STRING per sub-filter.
//
// # Invariants
//
//   - Bytes written are Redis 7.0's bytes for the same values (golden files
//     of Redis 7.0.15's DUMP, and a comparison with a live redis-server);
//     Redis 8's differ only in the footer's version and CRC.
//   - A Reader never reads past its input and never panics; each error
//     wraps exactly one of ErrTruncated, ErrCorrupt, ErrTooLarge.
//   - A Reader allocates only the strings it returns, each at most the
//     limit given to the read and, for LZF, at most 88 times its stream's
//     length (264 bytes from a 3-byte reference is LZF's greatest
//     expansion): a stated length beyond either is refused before any
//     allocation. Returned strings never alias the input.
//   - AppendLZF never writes more than its limit; DecompressLZF never
//     writes outside dst.
//
// It imports only the standard library; package redisbloom imports it.
package rdb
