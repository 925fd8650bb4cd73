package conf_test

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/server/internal/conf"
)

// server is a Live: a primary listening on 127.0.0.1:6379.
type server struct{}

func (server) ListenAddr(tls bool) (string, string) {
	if tls {
		return "127.0.0.1", "0"
	}
	return "127.0.0.1", "6379"
}
func (server) ReplicaOf() string  { return "" }
func (server) BacklogSize() int64 { return 1 << 20 }

// CONFIG SET is all or none: the second pair's bad value leaves maxmemory
// as it was; then both settings are set together.
func Example() {
	st := conf.NewState(conf.Config{})
	_, err := conf.Set(&st, []string{"maxmemory", "100mb", "maxclients", "0"})
	fmt.Println(err)
	names, err := conf.Set(&st, []string{"maxmemory", "100mb", "maxclients", "64"})
	fmt.Println(names, err)
	for _, p := range conf.Get(server{}, &st, []string{"max*", "port"}) {
		fmt.Printf("%s=%s\n", p.Name, p.Value)
	}
	// Output:
	// CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 1000000 inclusive
	// [maxmemory maxclients] <nil>
	// port=6379
	// maxclients=64
	// max-item-size=65536
	// max-args=1048576
	// maxmemory-clients=0
	// maxmemory=104857600
	// max-filter-memory=0
}
