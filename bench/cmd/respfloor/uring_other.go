//go:build !linux

package main

import (
	"errors"
	"net"
)

func serveUring(addr string, loops int, ready func(net.Addr)) error {
	return errors.New("uring: io_uring is Linux only")
}
