package acl

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
)

// The check of one command, before it runs: whether a user may run it, on
// its keys and its channels. The server finds the command's id, keys and
// channels (the command table's key specs, Channels); this file decides.

// The reasons a command is denied, as ACL LOG records them.
const (
	DeniedCommand = "command"
	DeniedKey     = "key"
	DeniedChannel = "channel"
)

// KeySpec lists a request's keys with the access each needs: read for a
// key the command reads, write for one it writes (or both). KeyAccess calls
// fn for each key of args (the full request) by its position, and stops
// when fn returns false. The command table's specs are KeySpecs.
type KeySpec interface {
	KeyAccess(args [][]byte, fn func(pos int, read, write bool) bool)
}

// Denial is why u may not run the command of catalog id on args: "" if it
// may, else DeniedCommand, or DeniedKey or DeniedChannel and the first key
// or channel u may not touch. keys lists args's keys (nil: none); chans
// are the channels args names, patterns if pattern (Channels). The command
// is checked first, then the keys, then the channels, as Redis does.
func (u *User) Denial(id int, keys KeySpec, args, chans [][]byte, pattern bool) (reason string, object []byte) {
	switch {
	case u.Unrestricted():
		return "", nil
	case !u.CanRun(id):
		return DeniedCommand, nil
	}
	if !u.allKeys && keys != nil {
		keys.KeyAccess(args, func(pos int, read, write bool) bool {
			if !u.CanAccess(args[pos], read, write) {
				reason, object = DeniedKey, args[pos]
				return false
			}
			return true
		})
		if reason != "" {
			return reason, object
		}
	}
	for _, c := range chans {
		if !u.CanChannel(string(c), pattern) {
			return DeniedChannel, c
		}
	}
	return "", nil
}

// Channels are the channels a pub/sub command named name (lower case)
// publishes or subscribes to, in args (the full request), and whether they
// are patterns: PUBLISH's and SPUBLISH's first argument, every argument of
// SUBSCRIBE and SSUBSCRIBE, every argument of PSUBSCRIBE as a pattern
// (which User.CanChannel must find among the user's own literally).
// Unsubscribing names none: it is never denied; nor does any other command.
func Channels(name string, args [][]byte) (chans [][]byte, pattern bool) {
	if len(args) < 2 {
		return nil, false
	}
	switch name {
	case "publish", "spublish":
		return args[1:2], false
	case "subscribe", "ssubscribe":
		return args[1:], false
	case "psubscribe":
		return args[1:], true
	}
	return nil, false
}

// MaxGenPassBits bounds ACL GENPASS's bits, as Redis does.
const MaxGenPassBits = 4096

// ErrGenPassBits refuses a number of bits GenPass does not make, in
// Redis's words.
var ErrGenPassBits = errors.New("ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")

// GenPass is a password of bits random bits (ACL GENPASS), from the
// system's secure random source, in hex: (bits+3)/4 digits, bits rounded
// up to a multiple of 4, as Redis's. bits must be in [1, MaxGenPassBits],
// else ErrGenPassBits.
func GenPass(bits int) (string, error) {
	if bits <= 0 || bits > MaxGenPassBits {
		return "", ErrGenPassBits
	}
	b := make([]byte, (bits+7)/8)
	rand.Read(b)
	return hex.EncodeToString(b)[:(bits+3)/4], nil
}
