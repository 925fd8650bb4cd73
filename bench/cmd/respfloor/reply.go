package main

import (
	"bytes"

	"github.com/tidwall/redcon"
)

// appendReply appends the floor's answer to one command: PONG to PING, a
// nil bulk to GET (what an empty redis-server answers), and the integer 0
// to anything else (HELLO excepted, below).
func appendReply(out []byte, args [][]byte) []byte {
	if len(args) > 0 {
		switch {
		case bytes.EqualFold(args[0], []byte("ping")):
			return append(out, "+PONG\r\n"...)
		case bytes.EqualFold(args[0], []byte("get")):
			return append(out, "$-1\r\n"...)
		case bytes.EqualFold(args[0], []byte("hello")):
			// As a server before RESP3, so that clients such as
			// go-redis fall back to RESP2.
			return append(out, "-ERR unknown command 'HELLO'\r\n"...)
		}
	}
	return redcon.AppendInt(out, 0)
}
