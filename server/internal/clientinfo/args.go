package clientinfo

import (
	"fmt"
	"strings"
)

// ValidName refuses names Redis refuses (ErrName): spaces, newlines and
// other characters outside '!'..'~'. The empty name is valid.
func ValidName(name []byte) error {
	if !visible(name) {
		return ErrName
	}
	return nil
}

func visible(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// The fields CLIENT SETINFO sets.
const (
	LibName = "lib-name"
	LibVer  = "lib-ver"
)

// ParseSetInfo reads CLIENT SETINFO option value: which field (LibName or
// LibVer) gets value, or why not: a value with characters outside
// '!'..'~', or another option, as Redis refuses them (the value first).
func ParseSetInfo(option, value []byte) (string, error) {
	if !visible(value) {
		return "", replyError("ERR " + strings.ToUpper(string(option)) + " cannot contain spaces, newlines or special characters.")
	}
	switch o := strings.ToLower(string(option)); o {
	case LibName, LibVer:
		return o, nil
	}
	return "", replyError(fmt.Sprintf("ERR Unrecognized option '%s'", printable(option, 32)))
}

// ParseOnOff reads ON or OFF, in any case (CLIENT NO-EVICT, NO-TOUCH).
func ParseOnOff(arg []byte) (bool, error) {
	switch strings.ToLower(string(arg)) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, ErrSyntax
}

// A Reply is CLIENT REPLY's mode.
type Reply int

// CLIENT REPLY's modes: ON answers every command; OFF none, until ON; SKIP
// not the next one. Only ON is answered itself.
const (
	ReplyOn Reply = iota
	ReplyOff
	ReplySkip
)

// ParseReply reads CLIENT REPLY's mode, in any case.
func ParseReply(arg []byte) (Reply, error) {
	switch strings.ToLower(string(arg)) {
	case "on":
		return ReplyOn, nil
	case "off":
		return ReplyOff, nil
	case "skip":
		return ReplySkip, nil
	}
	return 0, ErrSyntax
}
