package rdb

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Object types: the first byte of a payload's body.
const (
	TypeString = 0 // a string: then an RDB string
	// TypeModule is a module's value (Redis's RDB_TYPE_MODULE_2): then the
	// module type's ModuleID as a length, the fields the module saved, each
	// behind its opcode, and the EOF opcode.
	TypeModule = 7
)

// Module field opcodes, each written as an RDB length before its field.
const (
	opEOF    = 0 // the end of the value
	opSigned = 1 // a length holding an int64's bits
	opUint   = 2 // a length
	opFloat  = 3 // 4 bytes, IEEE 754, little-endian
	opDouble = 4 // 8 bytes, IEEE 754, little-endian
	opString = 5 // an RDB string
)

var opNames = [...]string{"EOF", "SINT", "UINT", "FLOAT", "DOUBLE", "STRING"}

func opName(op uint64) string {
	if op < uint64(len(opNames)) {
		return opNames[op]
	}
	return fmt.Sprintf("opcode %d", op)
}

// moduleCharset spells a module type's name, 6 bits a character; the index
// of a character is its value.
const moduleCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// A ModuleID names a module type and the encoding version of a value, as
// Redis writes it before the value: the type's 9-character name, 6 bits a
// character, first character highest, then the 10-bit encoding version.
// RedisBloom's cuckoo filter, "MBbloomCF" version 4, is 0x3016e5a289821404.
type ModuleID uint64

const (
	moduleNameLen = 9
	maxEncVer     = 1<<10 - 1
)

// NewModuleID returns the id of module type name at encoding version
// encver. It panics unless name is 9 characters of A-Z, a-z, 0-9, '-' and
// '_' and encver is at most 1023, as Redis refuses such a type when a
// module registers it: a type's name is a constant of the program.
func NewModuleID(name string, encver int) ModuleID {
	if len(name) != moduleNameLen || encver < 0 || encver > maxEncVer {
		panic(fmt.Sprintf("rdb: module type %q version %d: want 9 characters and a version of 0 to 1023", name, encver))
	}
	var id uint64
	for i := range len(name) {
		c := strings.IndexByte(moduleCharset, name[i])
		if c < 0 {
			panic(fmt.Sprintf("rdb: module type %q: %q is not in A-Z, a-z, 0-9, '-', '_'", name, name[i]))
		}
		id = id<<6 | uint64(c)
	}
	return ModuleID(id<<10 | uint64(encver))
}

// Name is the module type's name. Every id has one: each 6 bits name a
// character.
func (id ModuleID) Name() string {
	var name [moduleNameLen]byte
	bits := uint64(id) >> 10
	for i := moduleNameLen - 1; i >= 0; i-- {
		name[i] = moduleCharset[bits&63]
		bits >>= 6
	}
	return string(name[:])
}

// EncodingVersion is the version the module saved the value with.
func (id ModuleID) EncodingVersion() int { return int(id & maxEncVer) }

// String is the name and the encoding version, "MBbloomCF/4".
func (id ModuleID) String() string { return fmt.Sprintf("%s/%d", id.Name(), id.EncodingVersion()) }

// AppendModuleType appends the start of a module value: TypeModule and id.
// The value's fields follow, then AppendModuleEOF.
func AppendModuleType(b []byte, id ModuleID) []byte {
	return AppendLen(append(b, TypeModule), uint64(id))
}

// AppendUnsigned appends a module's unsigned field (RedisModule_SaveUnsigned).
func AppendUnsigned(b []byte, v uint64) []byte { return AppendLen(append(b, opUint), v) }

// AppendSigned appends a module's signed field (RedisModule_SaveSigned).
func AppendSigned(b []byte, v int64) []byte { return AppendLen(append(b, opSigned), uint64(v)) }

// AppendFloat appends a module's float field (RedisModule_SaveFloat).
func AppendFloat(b []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(append(b, opFloat), math.Float32bits(v))
}

// AppendDouble appends a module's double field (RedisModule_SaveDouble).
func AppendDouble(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, opDouble), math.Float64bits(v))
}

// AppendStringBuffer appends a module's string field
// (RedisModule_SaveStringBuffer), encoded as AppendString encodes.
func AppendStringBuffer(b, s []byte) []byte { return AppendString(append(b, opString), s) }

// AppendModuleEOF appends the end of a module value.
func AppendModuleEOF(b []byte) []byte { return append(b, opEOF) }

// ReadModuleType reads the start of a module value: TypeModule and the
// module type's id. Any other type is refused.
func (r *Reader) ReadModuleType() (ModuleID, error) {
	start := r.off
	t, err := r.ReadType()
	if err != nil {
		return 0, err
	}
	if t != TypeModule {
		return 0, corrupt(start, "object type %d, want a module value (%d)", t, TypeModule)
	}
	id, err := r.ReadLen()
	if err != nil {
		return 0, err
	}
	return ModuleID(id), nil
}

// readOp reads a field's opcode and checks it is want.
func (r *Reader) readOp(want uint64) error {
	start := r.off
	op, err := r.ReadLen()
	if err != nil {
		return err
	}
	if op != want {
		return corrupt(start, "module field is %s, want %s", opName(op), opName(want))
	}
	return nil
}

// ReadUnsigned reads a module's unsigned field (RedisModule_LoadUnsigned).
func (r *Reader) ReadUnsigned() (uint64, error) {
	if err := r.readOp(opUint); err != nil {
		return 0, err
	}
	return r.ReadLen()
}

// ReadSigned reads a module's signed field (RedisModule_LoadSigned).
func (r *Reader) ReadSigned() (int64, error) {
	if err := r.readOp(opSigned); err != nil {
		return 0, err
	}
	v, err := r.ReadLen()
	return int64(v), err
}

// ReadFloat reads a module's float field (RedisModule_LoadFloat).
func (r *Reader) ReadFloat() (float32, error) {
	if err := r.readOp(opFloat); err != nil {
		return 0, err
	}
	if r.Len() < 4 {
		return 0, truncated(r.off, "float")
	}
	r.off += 4
	return math.Float32frombits(binary.LittleEndian.Uint32(r.b[r.off-4:])), nil
}

// ReadDouble reads a module's double field (RedisModule_LoadDouble).
func (r *Reader) ReadDouble() (float64, error) {
	if err := r.readOp(opDouble); err != nil {
		return 0, err
	}
	if r.Len() < 8 {
		return 0, truncated(r.off, "double")
	}
	r.off += 8
	return math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.off-8:])), nil
}

// ReadStringBuffer reads a module's string field
// (RedisModule_LoadStringBuffer), as ReadString reads one, within limit.
func (r *Reader) ReadStringBuffer(limit int) ([]byte, error) {
	if err := r.readOp(opString); err != nil {
		return nil, err
	}
	return r.ReadString(limit)
}

// ReadModuleEOF reads the end of a module value.
func (r *Reader) ReadModuleEOF() error { return r.readOp(opEOF) }
