package clientinfo

import (
	"fmt"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/quoted"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
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
	return "", replyError(fmt.Sprintf("ERR Unrecognized option '%s'", quoted.Printable(option, 32)))
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

// help is CLIENT HELP's reply, Redis's lines.
var help = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"    * ID <client-id>",
	"      Kill connections by client id.",
	"    * MAXAGE <maxage>",
	"      Kill connections older than the specified age.",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"    * ID <client-id> [<client-id> ...]",
	"      Return clients of specified IDs only.",
	"NO-EVICT (ON|OFF)",
	"    Protect the current client connection from eviction.",
	"NO-TOUCH (ON|OFF)",
	"    Will not touch LRU/LFU stats when this mode is on.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"SETINFO <option> <value>",
	"    Set client meta attr. Options are:",
	"    * LIB-NAME: the client lib name.",
	"    * LIB-VER: the client lib version.",
	"HELP",
	"    Print this help.",
}

// WriteHelp writes CLIENT HELP's reply: its lines as status replies.
func WriteHelp(w *resp.Writer) { w.WriteHelp(help) }
