package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The plumbing of the cluster subcommands: the topology as the nodes hold
// it, connections to nodes, fetching a cluster's topology through one node
// and pushing a new one to every node, and slot ranges.
//
// There is no gossip (go doc ./server, "Cluster"): each node holds the
// topology it was last given by CUCKOO.CLUSTER SETCONFIG and refuses one of
// an older epoch. A change is therefore made here, by the tool: fetch the
// topology, edit a copy, push it with a new epoch to every node. A push
// that stops half-way (a node down or refusing) leaves some nodes at the
// new epoch and others at the old one; fetch reports it, and pushing again
// mends it, since each push takes an epoch above every node's.

// clusterSlots is Redis Cluster's number of hash slots.
const clusterSlots = 16384

// clusterWait bounds how long a subcommand waits for replicas to connect
// and every node to report cluster_state:ok. New nodes are empty, so their
// first full copy takes milliseconds; the rest is for a loaded machine.
const clusterWait = 30 * time.Second

// clusterTopology mirrors the JSON of CUCKOO.CLUSTER SETCONFIG and GETCONFIG
// (server/cluster.go's clusterConfig), field for field: the server refuses
// unknown fields.
type clusterTopology struct {
	// Epoch is the topology's version: a node refuses one older than its
	// own, and takes the same epoch again.
	Epoch int64 `json:"epoch"`
	// Myself is the id of the node the topology is pushed to; push sets
	// it for each node.
	Myself string        `json:"myself"`
	Nodes  []clusterNode `json:"nodes"`
}

// clusterNode is one node of a topology.
type clusterNode struct {
	ID   string `json:"id"` // 40 hex digits, CLUSTER MYID
	Host string `json:"host"`
	Port int    `json:"port"`
	Role string `json:"role"` // "primary" or "replica"
	// Primary is a replica's primary's id.
	Primary string `json:"primary,omitempty"`
	// Slots are a primary's slot ranges, first and last included.
	Slots [][2]int `json:"slots,omitempty"`
	// Migrating maps a slot this primary owns and is moving away to the
	// target's id; Importing maps a slot another primary owns and this one
	// is taking over to the owner's id.
	Migrating map[int]string `json:"migrating,omitempty"`
	Importing map[int]string `json:"importing,omitempty"`
}

const (
	rolePrimary = "primary"
	roleReplica = "replica"
)

// addr is the node's address, host:port.
func (n *clusterNode) addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// name is how messages name a node: its short id and address.
func (n *clusterNode) name() string { return shortID(n.ID) + " (" + n.addr() + ")" }

// shortID is the first 8 hex digits of a node id, as tables print it.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// node is the node of id, or nil.
func (t *clusterTopology) node(id string) *clusterNode {
	for i := range t.Nodes {
		if t.Nodes[i].ID == id {
			return &t.Nodes[i]
		}
	}
	return nil
}

// find is the node ref names: its id, a prefix of its id that no other
// node shares, or its host:port as the topology lists it.
func (t *clusterTopology) find(ref string) (*clusterNode, error) {
	if strings.Contains(ref, ":") {
		for i := range t.Nodes {
			if t.Nodes[i].addr() == ref {
				return &t.Nodes[i], nil
			}
		}
		return nil, fmt.Errorf("no node of the cluster is at %s (the cluster's addresses: %s)", ref, strings.Join(t.addrs(), " "))
	}
	var found *clusterNode
	for i := range t.Nodes {
		if ref != "" && strings.HasPrefix(t.Nodes[i].ID, strings.ToLower(ref)) {
			if found != nil {
				return nil, fmt.Errorf("%q is the start of more than one node id (%s, %s): give more of it", ref, shortID(found.ID), shortID(t.Nodes[i].ID))
			}
			found = &t.Nodes[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no node of the cluster has id %q", ref)
	}
	return found, nil
}

func (t *clusterTopology) addrs() []string {
	var out []string
	for i := range t.Nodes {
		out = append(out, t.Nodes[i].addr())
	}
	return out
}

// clone is a deep copy of t, to edit without changing t.
func (t *clusterTopology) clone() clusterTopology {
	c := *t
	c.Nodes = slices.Clone(t.Nodes)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		n.Slots = slices.Clone(n.Slots)
		if n.Migrating != nil {
			n.Migrating = cloneMap(n.Migrating)
		}
		if n.Importing != nil {
			n.Importing = cloneMap(n.Importing)
		}
	}
	return c
}

func cloneMap(m map[int]string) map[int]string {
	c := make(map[int]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// primaries are the topology's primaries, in its order.
func (t *clusterTopology) primaries() []*clusterNode {
	var out []*clusterNode
	for i := range t.Nodes {
		if t.Nodes[i].Role == rolePrimary {
			out = append(out, &t.Nodes[i])
		}
	}
	return out
}

// replicasOf are the replicas of the primary of id, in the topology's order.
func (t *clusterTopology) replicasOf(id string) []*clusterNode {
	var out []*clusterNode
	for i := range t.Nodes {
		if t.Nodes[i].Role == roleReplica && t.Nodes[i].Primary == id {
			out = append(out, &t.Nodes[i])
		}
	}
	return out
}

// grouped is every node, each primary followed by its replicas, then any
// replica whose primary is not listed: the order tables print.
func (t *clusterTopology) grouped() []*clusterNode {
	var out []*clusterNode
	seen := map[string]bool{}
	for _, p := range t.primaries() {
		out = append(out, p)
		for _, r := range t.replicasOf(p.ID) {
			out = append(out, r)
			seen[r.ID] = true
		}
	}
	for i := range t.Nodes {
		if n := &t.Nodes[i]; n.Role != rolePrimary && !seen[n.ID] {
			out = append(out, n)
		}
	}
	return out
}

// owners is each slot's owner's id, "" for a slot no node owns.
func (t *clusterTopology) owners() []string {
	out := make([]string, clusterSlots)
	for i := range t.Nodes {
		for _, r := range t.Nodes[i].Slots {
			for s := max(r[0], 0); s <= min(r[1], clusterSlots-1); s++ {
				out[s] = t.Nodes[i].ID
			}
		}
	}
	return out
}

// uncovered are the slot ranges no node owns.
func (t *clusterTopology) uncovered() [][2]int {
	own := t.owners()
	return slotRangesOf(func(s int) bool { return own[s] == "" })
}

// sameNodes reports whether t and u list the same nodes with the same
// roles, slots and open slots (their epochs and myself aside).
func (t *clusterTopology) sameNodes(u *clusterTopology) bool {
	a, _ := json.Marshal(t.Nodes)
	b, _ := json.Marshal(u.Nodes)
	return string(a) == string(b)
}

// parseNodeAddr checks a node's address, host:port with a port in
// 1..65535, and returns its parts.
func parseNodeAddr(s string) (host string, port int, err error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("node address %q: want host:port", s)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, fmt.Errorf("node address %q: want host:port with a port in 1..65535", s)
	}
	return host, port, nil
}

// clusterAdmin holds the connections of one cluster subcommand to the
// nodes, by address, and the credentials they use. Its zero value works
// (no credentials); close it when done.
type clusterAdmin struct {
	user, password string
	// tls: connect to the nodes over TLS, trusting caCert's CAs and
	// presenting cert and key, if given (redis-cli's --tls, --cacert,
	// --cert, --key).
	tls                  bool
	caCert, cert, keyPEM string
	tlsOnce              sync.Once
	tlsConf              *tls.Config
	tlsErr               error
	// timeout bounds each command on a node (and dialling one); zero
	// means clusterTimeout. Slow commands (MIGRATE of a large slot) need
	// more.
	timeout time.Duration

	mu      sync.Mutex
	clients map[string]*redis.Client
}

// clusterTimeout is a command's default bound: a node that does not
// answer a GETCONFIG, INFO or SETCONFIG in that time counts as unreachable.
const clusterTimeout = 10 * time.Second

// adminFlags registers the flags every cluster subcommand shares, --user
// and --password, on fs and returns the clusterAdmin they configure. The
// password may come from the environment variable REDISCLI_AUTH instead,
// as redis-cli's does (so that it is not on the command line); the flag
// wins.
func adminFlags(fs *flag.FlagSet) *clusterAdmin {
	a := &clusterAdmin{}
	fs.StringVar(&a.user, "user", "", "the ACL `user` to authenticate to every node as (with --password)")
	fs.StringVar(&a.password, "password", "", "the `password` to authenticate to every node with (default $REDISCLI_AUTH)")
	fs.BoolVar(&a.tls, "tls", false, "connect to the nodes over TLS")
	fs.StringVar(&a.caCert, "cacert", "", "with --tls: the CAs, PEM `file`, that sign the nodes' certificates (default: the system's)")
	fs.StringVar(&a.cert, "cert", "", "with --tls: the client certificate, PEM `file`, the nodes ask for")
	fs.StringVar(&a.keyPEM, "key", "", "with --tls: the private key, PEM `file`, of --cert")
	return a
}

// tlsConfig is the TLS configuration of --tls, --cacert, --cert and --key,
// loaded once; nil without --tls.
func (a *clusterAdmin) tlsConfig() (*tls.Config, error) {
	if !a.tls {
		if a.caCert != "" || a.cert != "" || a.keyPEM != "" {
			return nil, errors.New("--cacert, --cert and --key need --tls")
		}
		return nil, nil
	}
	a.tlsOnce.Do(func() {
		c := &tls.Config{MinVersion: tls.VersionTLS12}
		switch {
		case (a.cert == "") != (a.keyPEM == ""):
			a.tlsErr = errors.New("--cert and --key: give both, or neither")
			return
		case a.cert != "":
			pair, err := tls.LoadX509KeyPair(a.cert, a.keyPEM)
			if err != nil {
				a.tlsErr = fmt.Errorf("--cert %s, --key %s: %w", a.cert, a.keyPEM, err)
				return
			}
			c.Certificates = []tls.Certificate{pair}
		}
		if a.caCert != "" {
			pem, err := os.ReadFile(a.caCert)
			if err != nil {
				a.tlsErr = fmt.Errorf("--cacert: %w", err)
				return
			}
			c.RootCAs = x509.NewCertPool()
			if !c.RootCAs.AppendCertsFromPEM(pem) {
				a.tlsErr = fmt.Errorf("--cacert %s: no PEM certificate in it", a.caCert)
				return
			}
		}
		a.tlsConf = c
	})
	return a.tlsConf, a.tlsErr
}

// client is the connection pool to the node at addr, made at first use.
// Neither commands nor dials are retried: an administrative step that
// fails is reported, not repeated, and a node that refuses connections is
// reported at once.
func (a *clusterAdmin) client(addr string) *redis.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[addr]; ok {
		return c
	}
	if a.clients == nil {
		a.clients = map[string]*redis.Client{}
	}
	d := cmp.Or(a.timeout, clusterTimeout)
	pass := a.secret()
	quietRedis.Do(func() { redis.SetLogger(discardLogger{}) })
	opt := &redis.Options{Addr: addr, Username: a.user, Password: pass,
		DialTimeout: d, ReadTimeout: d, WriteTimeout: d, MaxRetries: -1, DialerRetries: 1,
		PoolSize: 4, DisableIdentity: true}
	if tc, err := a.tlsConfig(); err != nil {
		// Every command reports it, naming the flag.
		opt.Dialer = func(context.Context, string, string) (net.Conn, error) { return nil, err }
	} else if tc != nil {
		opt.TLSConfig = tc.Clone() // go-redis sets its ServerName from addr
	}
	c := redis.NewClient(opt)
	a.clients[addr] = c
	return c
}

// quietRedis silences go-redis's own log (a failed dial is printed there
// as well as returned): the subcommands word every error themselves.
var quietRedis sync.Once

type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// secret is the password the tool authenticates with: --password, or
// $REDISCLI_AUTH.
func (a *clusterAdmin) secret() string { return cmp.Or(a.password, os.Getenv("REDISCLI_AUTH")) }

// close closes every connection.
func (a *clusterAdmin) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.clients {
		c.Close()
	}
	a.clients = nil
}

// nodeStatus is what one node says of itself.
type nodeStatus struct {
	Addr string          // the address it was reached at
	ID   string          // its node id
	Topo clusterTopology // its topology (CUCKOO.CLUSTER GETCONFIG); Myself is ID
}

// status reads the topology of the node at addr. Its errors name the node
// and say what is wrong: unreachable, not in cluster mode, not a cuckoo
// node, a password needed.
func (a *clusterAdmin) status(ctx context.Context, addr string) (*nodeStatus, error) {
	b, err := a.client(addr).Do(ctx, "CUCKOO.CLUSTER", "GETCONFIG").Text()
	if err != nil {
		return nil, nodeError(addr, err)
	}
	st := &nodeStatus{Addr: addr}
	if err := json.Unmarshal([]byte(b), &st.Topo); err != nil {
		return nil, fmt.Errorf("node %s: its topology: %v", addr, err)
	}
	st.ID = st.Topo.Myself
	return st, nil
}

// nodeError words a failed command on the node at addr.
func nodeError(addr string, err error) error {
	msg := err.Error()
	var rerr redis.Error
	switch {
	case strings.Contains(msg, "cluster support disabled"):
		return fmt.Errorf("node %s is not in cluster mode (start it with cuckoo serve --cluster-enabled)", addr)
	case strings.Contains(msg, "unknown command"):
		return fmt.Errorf("node %s is not a cuckoo cluster node: %v", addr, err)
	case strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "WRONGPASS"):
		return fmt.Errorf("node %s: %v (give --user and --password, or REDISCLI_AUTH)", addr, err)
	case errors.As(err, &rerr):
		return fmt.Errorf("node %s: %v", addr, err)
	}
	return fmt.Errorf("node %s is unreachable: %v", addr, err)
}

// clusterView is a cluster as fetched through one node, the seed: the
// seed's topology, and what each node it lists says of itself.
type clusterView struct {
	Seed string          // the seed's address, as given
	Topo clusterTopology // the seed's topology; Myself is the seed's id
	// Nodes are the listed nodes that answered, by id, each with its own
	// topology; Errs the ones that did not (or that answered with another
	// id), by id.
	Nodes map[string]*nodeStatus
	Errs  map[string]error
	// Warnings say, in the topology's order, which nodes are unreachable
	// and which hold another epoch or another topology than the seed.
	Warnings []string
}

// fetch reads the topology of the node at seed, then asks every node it
// lists for its own. A node that cannot be reached is in Errs, not an
// error; a seed that cannot be reached, or that is in no cluster yet, is.
func (a *clusterAdmin) fetch(ctx context.Context, seed string) (*clusterView, error) {
	st, err := a.status(ctx, seed)
	if err != nil {
		return nil, err
	}
	if len(st.Topo.Nodes) == 0 {
		return nil, fmt.Errorf("node %s is in no cluster yet (its topology lists no nodes): see cuckoo cluster create", seed)
	}
	v := &clusterView{Seed: seed, Topo: st.Topo, Nodes: map[string]*nodeStatus{}, Errs: map[string]error{}}
	if v.Topo.node(st.ID) == nil {
		v.Warnings = append(v.Warnings, fmt.Sprintf("the seed %s (%s) is not in its own topology", seed, shortID(st.ID)))
	}
	got := make([]*nodeStatus, len(v.Topo.Nodes))
	errs := make([]error, len(v.Topo.Nodes))
	var wg sync.WaitGroup
	for i := range v.Topo.Nodes {
		n := &v.Topo.Nodes[i]
		if n.ID == st.ID {
			got[i] = st
			continue
		}
		wg.Go(func() {
			got[i], errs[i] = a.status(ctx, n.addr())
			if errs[i] == nil && got[i].ID != n.ID {
				errs[i] = fmt.Errorf("node %s: the node at %s is %s, not %s", n.addr(), n.addr(), shortID(got[i].ID), shortID(n.ID))
			}
		})
	}
	wg.Wait()
	for i := range v.Topo.Nodes {
		n := &v.Topo.Nodes[i]
		if errs[i] != nil {
			v.Errs[n.ID] = errs[i]
			v.Warnings = append(v.Warnings, errs[i].Error())
			continue
		}
		v.Nodes[n.ID] = got[i]
		switch t := &got[i].Topo; {
		case t.Epoch != v.Topo.Epoch:
			v.Warnings = append(v.Warnings, fmt.Sprintf("node %s has epoch %d, the seed %d", n.name(), t.Epoch, v.Topo.Epoch))
		case !t.sameNodes(&v.Topo):
			v.Warnings = append(v.Warnings, fmt.Sprintf("node %s has another topology of the same epoch, %d", n.name(), t.Epoch))
		}
	}
	return v, nil
}

// push sets topo on the nodes of order (ids, each listed in topo; nil: every
// node of topo, in its order), one after the other, each with itself as
// myself and all with one new epoch, one above the highest that any node of
// topo holds now; it returns that epoch. topo itself is not changed.
//
// Every node of order is asked for its epoch first, and must answer with
// the id topo gives it: if one does not, push returns the error and no
// node is changed. A node that refuses the topology (another push raced
// this one, or it finds the topology inconsistent) stops the push; the
// error names it, why, and the nodes already set, which keep the new
// topology: push again, after mending the cause, to finish.
func (a *clusterAdmin) push(ctx context.Context, topo clusterTopology, order []string) (int64, error) {
	if order == nil {
		for i := range topo.Nodes {
			order = append(order, topo.Nodes[i].ID)
		}
	}
	pushTo := map[string]bool{}
	for _, id := range order {
		if topo.node(id) == nil {
			return 0, fmt.Errorf("push: node %s is not in the topology", shortID(id))
		}
		pushTo[id] = true
	}
	// The highest epoch: every node of topo is asked, and those pushed to
	// must answer.
	epochs := make([]int64, len(topo.Nodes))
	errs := make([]error, len(topo.Nodes))
	var wg sync.WaitGroup
	for i := range topo.Nodes {
		n := &topo.Nodes[i]
		wg.Go(func() {
			st, err := a.status(ctx, n.addr())
			switch {
			case err != nil:
				errs[i] = err
			case st.ID != n.ID:
				errs[i] = fmt.Errorf("node %s: the node at %s is %s, not %s", n.addr(), n.addr(), shortID(st.ID), shortID(n.ID))
			default:
				epochs[i] = st.Topo.Epoch
			}
		})
	}
	wg.Wait()
	for i := range topo.Nodes {
		if errs[i] != nil && pushTo[topo.Nodes[i].ID] {
			return 0, fmt.Errorf("%w; no node was changed", errs[i])
		}
	}
	epoch := slices.Max(append(epochs, topo.Epoch)) + 1
	var done []string
	for _, id := range order {
		n := topo.node(id)
		t := topo
		t.Epoch, t.Myself = epoch, id
		b, err := json.Marshal(t)
		if err != nil {
			return 0, err
		}
		if err := a.client(n.addr()).Do(ctx, "CUCKOO.CLUSTER", "SETCONFIG", string(b)).Err(); err != nil {
			set := "no node was changed"
			if len(done) > 0 {
				set = "already set on " + strings.Join(done, ", ")
			}
			return 0, fmt.Errorf("node %s refused the topology of epoch %d: %v (%s)", n.name(), epoch, err, set)
		}
		done = append(done, n.name())
	}
	return epoch, nil
}

// replicate sends each replica of ids (nil: every replica of topo)
// REPLICAOF its primary's host and port.
func (a *clusterAdmin) replicate(ctx context.Context, topo *clusterTopology, ids []string) error {
	for i := range topo.Nodes {
		n := &topo.Nodes[i]
		if n.Role != roleReplica || ids != nil && !slices.Contains(ids, n.ID) {
			continue
		}
		p := topo.node(n.Primary)
		if p == nil {
			return fmt.Errorf("replica %s: its primary %s is not in the topology", n.name(), shortID(n.Primary))
		}
		if err := a.client(n.addr()).Do(ctx, "REPLICAOF", p.Host, strconv.Itoa(p.Port)).Err(); err != nil {
			return fmt.Errorf("REPLICAOF %s %d on %s: %w", p.Host, p.Port, n.name(), nodeError(n.addr(), err))
		}
	}
	return nil
}

// waitReady waits, up to d, until every replica of topo reports its link to
// its primary up (INFO replication: master_link_status:up, to the primary's
// host and port) and, if topo gives every slot an owner, every node reports
// cluster_state:ok. Its error names what was still not ready.
func (a *clusterAdmin) waitReady(ctx context.Context, topo *clusterTopology, d time.Duration) error {
	full := len(topo.uncovered()) == 0
	deadline := time.Now().Add(d)
	for {
		var waiting []string
		for i := range topo.Nodes {
			n := &topo.Nodes[i]
			c := a.client(n.addr())
			if n.Role == roleReplica {
				if p := topo.node(n.Primary); p != nil {
					f := infoFields(ctx, c, "replication")
					if f["master_link_status"] != "up" || !replicating(f, p) {
						waiting = append(waiting, fmt.Sprintf("replica %s's link to %s is not up", n.name(), p.addr()))
					}
				}
			}
			if full {
				if s, _ := c.ClusterInfo(ctx).Result(); !strings.Contains(s, "cluster_state:ok") {
					waiting = append(waiting, fmt.Sprintf("node %s does not report cluster_state:ok", n.name()))
				}
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %s", d, strings.Join(waiting, "; "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replicating reports whether f, a node's INFO replication, says it
// replicates p (its link may be down).
func replicating(f map[string]string, p *clusterNode) bool {
	return f["role"] == "slave" && f["master_host"] == p.Host && f["master_port"] == strconv.Itoa(p.Port)
}

// pushOrder is an order for push to topo: the ids of first, then every
// other node of topo, in its order, but those in skip (unreachable).
func (t *clusterTopology) pushOrder(skip map[string]error, first ...string) []string {
	order := slices.Clone(first)
	for i := range t.Nodes {
		if id := t.Nodes[i].ID; !slices.Contains(first, id) && skip[id] == nil {
			order = append(order, id)
		}
	}
	return order
}

// infoFields is INFO of the given sections as a map of field to value;
// empty if the node does not answer.
func infoFields(ctx context.Context, c *redis.Client, sections ...string) map[string]string {
	out := map[string]string{}
	s, err := c.Info(ctx, sections...).Result()
	if err != nil {
		return out
	}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSuffix(l, "\r"), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// Slot ranges are [first, last] pairs, both included, as the topology
// writes them; "normal" ranges are sorted, disjoint and not adjacent (the
// helpers below return them so).

// parseSlotRanges parses slots written as the tool prints them: ranges and
// single slots separated by commas, "0-5460,5462,6000-6100". A slot out of
// 0..16383, a range that runs backwards and a slot given twice are errors.
func parseSlotRanges(s string) ([][2]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no slots given: want ranges such as 0-5460,5462")
	}
	in := make([]bool, clusterSlots)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		a, b, isRange := strings.Cut(part, "-")
		lo, err1 := parseSlot(a)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = parseSlot(b)
		}
		if err := cmp.Or(err1, err2); err != nil {
			return nil, fmt.Errorf("slots %q: %q: %v", s, part, err)
		}
		if lo > hi {
			return nil, fmt.Errorf("slots %q: range %q runs backwards", s, part)
		}
		for slot := lo; slot <= hi; slot++ {
			if in[slot] {
				return nil, fmt.Errorf("slots %q: slot %d given twice", s, slot)
			}
			in[slot] = true
		}
	}
	return slotRangesOf(func(s int) bool { return in[s] }), nil
}

func parseSlot(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || strings.HasPrefix(s, "+") {
		return 0, errors.New("want a slot number, or two joined by -")
	}
	if n < 0 || n >= clusterSlots {
		return 0, fmt.Errorf("slot %d is out of 0..%d", n, clusterSlots-1)
	}
	return n, nil
}

// formatSlotRanges writes ranges as parseSlotRanges reads them, a single
// slot as itself: "0-5460,5462". No slots are "".
func formatSlotRanges(rs [][2]int) string {
	var sb strings.Builder
	for i, r := range rs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(r[0]))
		if r[1] != r[0] {
			sb.WriteByte('-')
			sb.WriteString(strconv.Itoa(r[1]))
		}
	}
	return sb.String()
}

// countSlots is the number of slots in ranges that do not overlap.
func countSlots(rs [][2]int) int {
	n := 0
	for _, r := range rs {
		n += r[1] - r[0] + 1
	}
	return n
}

// splitSlots divides the 16384 slots among n primaries in contiguous
// ranges, in order, as evenly as can be: the first 16384%n get one slot
// more. n is at least 1.
func splitSlots(n int) [][2]int {
	out := make([][2]int, n)
	first := 0
	for i := range out {
		size := clusterSlots / n
		if i < clusterSlots%n {
			size++
		}
		out[i] = [2]int{first, first + size - 1}
		first += size
	}
	return out
}

// addSlots is the union of two sets of ranges, normal.
func addSlots(a, b [][2]int) [][2]int {
	in := slotBits(a)
	for s, ok := range slotBits(b) {
		in[s] = in[s] || ok
	}
	return slotRangesOf(func(s int) bool { return in[s] })
}

// removeSlots is the ranges of a less those of b, normal.
func removeSlots(a, b [][2]int) [][2]int {
	in, out := slotBits(a), slotBits(b)
	return slotRangesOf(func(s int) bool { return in[s] && !out[s] })
}

// slotBits is ranges as one flag a slot; a range's slots outside 0..16383
// are left out.
func slotBits(rs [][2]int) []bool {
	in := make([]bool, clusterSlots)
	for _, r := range rs {
		for s := max(r[0], 0); s <= min(r[1], clusterSlots-1); s++ {
			in[s] = true
		}
	}
	return in
}

// slotRangesOf is the normal ranges of the slots for which in is true.
func slotRangesOf(in func(slot int) bool) [][2]int {
	var out [][2]int
	for s := range clusterSlots {
		if !in(s) {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == s-1 {
			out[n-1][1] = s
		} else {
			out = append(out, [2]int{s, s})
		}
	}
	return out
}
