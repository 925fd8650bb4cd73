package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// Pub/sub (issue 17): go-redis's PubSub in RESP2 and RESP3, raw replies in
// both protocols, RESP2's subscribed mode, a slow subscriber's disconnection,
// ordering under concurrency, ACL channels, redis-cli, CLIENT KILL TYPE.

// receive reads one message (skipping confirmations) within a few seconds.
func receive(t *testing.T, ps *redis.PubSub) *redis.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		v, err := ps.Receive(ctx)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if m, ok := v.(*redis.Message); ok {
			return m
		}
	}
}

// TestPubSubGoRedis: SUBSCRIBE and PSUBSCRIBE receive PUBLISH's messages;
// PUBLISH, PUBSUB NUMSUB, NUMPAT, CHANNELS, INFO and CLIENT LIST count them.
func TestPubSubGoRedis(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		addr := c.Options().Addr
		ps := client(t, addr, func(o *redis.Options) { o.Protocol = proto }).Subscribe(ctx, "news.sport", "alerts")
		defer ps.Close()
		if _, err := ps.Receive(ctx); err != nil { // the first confirmation
			t.Fatal(err)
		}
		if err := ps.PSubscribe(ctx, "news.*"); err != nil {
			t.Fatal(err)
		}
		// Wait for the three subscriptions to be in place.
		deadline := time.Now().Add(5 * time.Second)
		for c.PubSubNumPat(ctx).Val() != 1 || c.PubSubNumSub(ctx, "alerts").Val()["alerts"] != 1 {
			if time.Now().After(deadline) {
				t.Fatal("subscriptions not registered")
			}
			time.Sleep(time.Millisecond)
		}
		if n, err := c.Publish(ctx, "news.sport", "goal").Result(); err != nil || n != 2 {
			t.Errorf("PUBLISH news.sport = %d %v, want 2 (channel and pattern)", n, err)
		}
		got := []string{}
		for range 2 {
			m := receive(t, ps)
			got = append(got, m.Pattern+"|"+m.Channel+"|"+m.Payload)
		}
		slices.Sort(got)
		if want := []string{"news.*|news.sport|goal", "|news.sport|goal"}; !slices.Equal(got, want) {
			t.Errorf("received %q, want %q", got, want)
		}
		if n := c.Publish(ctx, "news.weather", "rain").Val(); n != 1 {
			t.Errorf("PUBLISH news.weather = %d, want 1", n)
		}
		if m := receive(t, ps); m.Pattern != "news.*" || m.Channel != "news.weather" || m.Payload != "rain" {
			t.Errorf("pmessage %+v", m)
		}
		if n := c.Publish(ctx, "nobody", "x").Val(); n != 0 {
			t.Errorf("PUBLISH nobody = %d", n)
		}
		if got := c.PubSubNumSub(ctx, "news.sport", "alerts", "nobody").Val(); got["news.sport"] != 1 || got["alerts"] != 1 || got["nobody"] != 0 {
			t.Errorf("PUBSUB NUMSUB = %v", got)
		}
		if got := c.PubSubChannels(ctx, "*").Val(); !slices.Equal(got, []string{"alerts", "news.sport"}) {
			t.Errorf("PUBSUB CHANNELS = %v", got)
		}
		if got := c.PubSubChannels(ctx, "news.*").Val(); !slices.Equal(got, []string{"news.sport"}) {
			t.Errorf("PUBSUB CHANNELS news.* = %v", got)
		}
		if infoField(t, c, "pubsub_channels") != 2 || infoField(t, c, "pubsub_patterns") != 1 || infoField(t, c, "pubsub_clients") != 1 {
			t.Error("INFO pubsub_channels, pubsub_patterns or pubsub_clients wrong")
		}
		list := c.ClientList(ctx).Val()
		if !strings.Contains(list, "flags=P db=0 sub=2 psub=1 ssub=0") {
			t.Errorf("CLIENT LIST has no subscriber with sub=2 psub=1:\n%s", list)
		}
		help, err := c.Do(ctx, "PUBSUB", "HELP").StringSlice()
		if err != nil || len(help) != 14 || !strings.HasPrefix(help[0], "PUBSUB <subcommand>") {
			t.Errorf("PUBSUB HELP: %q %v", help, err)
		}
		wantErr(t, c.Do(ctx, "PUBSUB", "CHANNELS", "a", "b").Err(),
			"ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.")
		// Shard channels are their own namespace.
		sps := client(t, addr, func(o *redis.Options) { o.Protocol = proto }).SSubscribe(ctx, "alerts")
		defer sps.Close()
		if _, err := sps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		if n := c.SPublish(ctx, "alerts", "s").Val(); n != 1 {
			t.Errorf("SPUBLISH = %d", n)
		}
		if m := receive(t, sps); m.Channel != "alerts" || m.Payload != "s" {
			t.Errorf("smessage %+v", m)
		}
		if got := c.PubSubShardNumSub(ctx, "alerts").Val(); got["alerts"] != 1 {
			t.Errorf("PUBSUB SHARDNUMSUB = %v", got)
		}
		if n := c.Publish(ctx, "alerts", "p").Val(); n != 1 {
			t.Errorf("PUBLISH alerts = %d: a shard subscriber counted", n)
		}
		// Unsubscribing everything empties the registry.
		if err := ps.Unsubscribe(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ps.PUnsubscribe(ctx); err != nil {
			t.Fatal(err)
		}
		for c.PubSubNumPat(ctx).Val() != 0 || len(c.PubSubChannels(ctx, "*").Val()) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("still subscribed: %v", c.PubSubChannels(ctx, "*").Val())
			}
			time.Sleep(time.Millisecond)
		}
	})
}

func wantReply(t *testing.T, got any, want string) {
	t.Helper()
	if s := resptest.Sprint(got); s != want {
		t.Errorf("reply %s, want %s", s, want)
	}
}

// TestPubSubRESP2Raw: the RESP2 replies as Redis 7.2 sends them, and the
// subscribed mode's restrictions.
func TestPubSubRESP2Raw(t *testing.T) {
	_, addr := start(t, server.Config{})
	sub, pub := resptest.Dial(t, addr), resptest.Dial(t, addr)
	wantReply(t, sub.Do("UNSUBSCRIBE"), "[unsubscribe <nil> 0]")
	wantReply(t, sub.Do("PUNSUBSCRIBE"), "[punsubscribe <nil> 0]")
	wantReply(t, sub.Do("GET", "x"), "-ERR unknown command 'GET', with args beginning with: 'x' ")
	sub.Send("SUBSCRIBE", "a", "b", "a")
	wantReply(t, sub.Read(), "[subscribe a 1]")
	wantReply(t, sub.Read(), "[subscribe b 2]")
	wantReply(t, sub.Read(), "[subscribe a 2]")
	wantReply(t, sub.Do("CF.EXISTS", "k", "x"),
		"-ERR Can't execute 'cf.exists': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	wantReply(t, sub.Do("CLIENT", "ID"),
		"-ERR Can't execute 'client|id': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	wantReply(t, sub.Do("PING"), "[pong ]")
	wantReply(t, sub.Do("PING", "hi"), "[pong hi]")
	wantReply(t, pub.Do("PUBLISH", "a", "hello"), "1")
	wantReply(t, sub.Read(), "[message a hello]")
	wantReply(t, sub.Do("PSUBSCRIBE", "b*"), "[psubscribe b* 3]")
	wantReply(t, pub.Do("PUBLISH", "b", "two"), "2")
	first, second := resptest.Sprint(sub.Read()), resptest.Sprint(sub.Read())
	if first != "[message b two]" || second != "[pmessage b* b two]" {
		t.Errorf("messages %s %s", first, second)
	}
	sub.Send("UNSUBSCRIBE")
	wantReply(t, sub.Read(), "[unsubscribe a 2]")
	wantReply(t, sub.Read(), "[unsubscribe b 1]")
	wantReply(t, sub.Do("UNSUBSCRIBE", "zz"), "[unsubscribe zz 1]")
	wantReply(t, sub.Do("UNSUBSCRIBE"), "[unsubscribe <nil> 1]")
	wantReply(t, sub.Do("PUNSUBSCRIBE", "b*"), "[punsubscribe b* 0]")
	// Out of subscribed mode: every command again.
	wantReply(t, sub.Do("PING"), "PONG")
	wantReply(t, sub.Do("CF.EXISTS", "k", "x"), "0")
	wantReply(t, pub.Do("PUBLISH", "a", "late"), "0")
	wantReply(t, pub.Do("PUBSUB", "NUMPAT"), "0")
}

// TestPubSubRESP3Raw: in RESP3 confirmations and messages are pushes, any
// command runs while subscribed, and a push never lands inside a reply:
// replies arrive whole and in order, messages whole and in PUBLISH order.
func TestPubSubRESP3Raw(t *testing.T) {
	_, addr := start(t, server.Config{})
	sub, pub := resptest.Dial(t, addr), resptest.Dial(t, addr)
	sub.Send("HELLO", "3")
	if kind, _ := sub.ReadKind(); kind != '%' {
		t.Fatalf("HELLO 3 answered %q", kind)
	}
	sub.Send("SUBSCRIBE", "c")
	if kind, v := sub.ReadKind(); kind != '>' || resptest.Sprint(v) != "[subscribe c 1]" {
		t.Fatalf("confirmation %q %v", kind, v)
	}
	sub.Send("UNSUBSCRIBE", "nope")
	if kind, v := sub.ReadKind(); kind != '>' || resptest.Sprint(v) != "[unsubscribe nope 1]" {
		t.Errorf("unsubscribe confirmation %q %v", kind, v)
	}
	wantReply(t, sub.Do("PING"), "PONG") // not RESP2's ["pong", ""]
	const n = 2000
	big := strings.Repeat("x", 3000) // replies longer than a segment
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for i := range n {
			pub.Do("PUBLISH", "c", fmt.Sprintf("m%d", i))
		}
	})
	wg.Go(func() {
		for i := range n {
			sub.Send("ECHO", fmt.Sprintf("%d%s", i, big))
		}
	})
	replies, msgs := 0, 0
	for replies < n || msgs < n {
		kind, v := sub.ReadKind()
		switch kind {
		case '>':
			want := fmt.Sprintf("[message c m%d]", msgs)
			if got := resptest.Sprint(v); got != want {
				t.Fatalf("push %d: %.80s, want %s", msgs, got, want)
			}
			msgs++
		case '$':
			if want := fmt.Sprintf("%d%s", replies, big); v != want {
				t.Fatalf("reply %d: %.80v", replies, v)
			}
			replies++
		default:
			t.Fatalf("unexpected %q %.200v after %d replies %d msgs", kind, v, replies, msgs)
		}
	}
}

// TestPubSubSlowSubscriber: a subscriber that reads nothing is disconnected
// once its pending messages reach client-output-buffer-limit pubsub's hard
// limit, and no PUBLISH waits for it.
func TestPubSubSlowSubscriber(t *testing.T) {
	var lim server.Limits
	if err := lim.OutputBuffer.Set("pubsub 1mb 0 0"); err != nil {
		t.Fatal(err)
	}
	_, addr := start(t, server.Config{Limits: lim})
	sub := resptest.Dial(t, addr)
	slowID := sub.Do("CLIENT", "ID").(int64)
	wantReply(t, sub.Do("SUBSCRIBE", "slow"), "[subscribe slow 1]")
	fast := client(t, addr).Subscribe(context.Background(), "slow")
	defer fast.Close()
	fast.Receive(context.Background())
	c := client(t, addr)
	ctx := context.Background()
	msg := strings.Repeat("m", 64<<10)
	var worst time.Duration
	deadline := time.Now().Add(20 * time.Second)
	published := 0
	go func() { // the reading subscriber keeps up
		for {
			if _, err := fast.ReceiveMessage(ctx); err != nil {
				return
			}
		}
	}()
	for {
		t0 := time.Now()
		n, err := c.Publish(ctx, "slow", msg).Result()
		worst = max(worst, time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
		published++
		// The slow one is gone. (Not the count of subscribers: on a loaded
		// machine the reading one can fall behind and be dropped first.)
		if n <= 1 && !strings.Contains(c.ClientList(ctx).Val(), fmt.Sprintf("id=%d ", slowID)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow subscriber is still there after %d messages", published)
		}
	}
	t.Logf("disconnected after %d messages of 64 KiB; slowest PUBLISH %v", published, worst)
	if worst > 2*time.Second {
		t.Errorf("a PUBLISH took %v: it waited for the slow subscriber", worst)
	}
	// Its connection is closed: reading ends (after what was sent).
	sub.TCP().SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := sub.Reader().ReadReply(); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the slow subscriber's connection is still open")
			}
			break
		}
	}
}

// TestPubSubConcurrent: many publishers and subscribers (channels and
// patterns) at once under -race; every subscriber gets every message, each
// publisher's in its PUBLISH order.
func TestPubSubConcurrent(t *testing.T) {
	pubs, subs, per := 8, 8, 500
	if testing.Short() {
		per = 100
	}
	_, addr := start(t, server.Config{})
	ctx := context.Background()
	type result struct {
		id   int
		errs []string
	}
	ready := make(chan struct{}, subs)
	results := make(chan result, subs)
	for s := range subs {
		go func() {
			proto := 2 + s%2
			c := client(t, addr, func(o *redis.Options) { o.Protocol = proto })
			var ps *redis.PubSub
			if s%3 == 0 {
				ps = c.PSubscribe(ctx, "load.*")
			} else {
				ps = c.Subscribe(ctx, "load.x")
			}
			defer ps.Close()
			if _, err := ps.Receive(ctx); err != nil {
				results <- result{s, []string{err.Error()}}
				ready <- struct{}{}
				return
			}
			ready <- struct{}{}
			next := make([]int, pubs)
			var errs []string
			for range pubs * per {
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				m, err := ps.ReceiveMessage(rctx)
				cancel()
				if err != nil {
					errs = append(errs, err.Error())
					break
				}
				var p, seq int
				if _, err := fmt.Sscanf(m.Payload, "%d:%d", &p, &seq); err != nil || p < 0 || p >= pubs {
					errs = append(errs, "bad payload "+m.Payload)
					break
				}
				if seq != next[p] {
					errs = append(errs, fmt.Sprintf("publisher %d: got %d, want %d", p, seq, next[p]))
					break
				}
				next[p]++
			}
			results <- result{s, errs}
		}()
	}
	for range subs {
		<-ready
	}
	var wg sync.WaitGroup
	for p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(t, addr)
			for i := range per {
				n, err := c.Publish(ctx, "load.x", fmt.Sprintf("%d:%d", p, i)).Result()
				if err != nil || n != int64(subs) {
					t.Errorf("PUBLISH = %d %v, want %d", n, err, subs)
					return
				}
			}
		}()
	}
	wg.Wait()
	for range subs {
		r := <-results
		for _, e := range r.errs {
			t.Errorf("subscriber %d: %s", r.id, e)
		}
	}
}

// TestPubSubACL: channel rules are checked for SUBSCRIBE, PSUBSCRIBE (the
// pattern literally) and PUBLISH, with NOPERM and an ACL LOG entry; new
// users have no channels, the default user all.
func TestPubSubACL(t *testing.T) {
	bothProtocols(t, func(t *testing.T, admin *redis.Client, proto int) {
		ctx := context.Background()
		addr := admin.Options().Addr
		if err := admin.ACLSetUser(ctx, "hello", "on", ">pw", "+@all", "~*", "&__sentinel__:*").Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ACLSetUser(ctx, "fresh", "on", ">pw", "+@all", "~*").Err(); err != nil {
			t.Fatal(err)
		}
		u := client(t, addr, func(o *redis.Options) { o.Username, o.Password, o.Protocol = "hello", "pw", proto })
		const noperm = "NOPERM No permissions to access a channel"
		if n, err := u.Publish(ctx, "__sentinel__:hello", "hi").Result(); err != nil || n != 0 {
			t.Errorf("PUBLISH allowed channel: %d %v", n, err)
		}
		wantErr(t, u.Publish(ctx, "other", "hi").Err(), noperm)
		wantErr(t, u.Do(ctx, "SUBSCRIBE", "__sentinel__:hello", "other").Err(), noperm)
		wantErr(t, u.Do(ctx, "PSUBSCRIBE", "__sentinel__:h*").Err(), noperm)
		wantErr(t, u.Do(ctx, "PSUBSCRIBE", "*").Err(), noperm)
		if n := admin.PubSubNumSub(ctx, "__sentinel__:hello").Val()["__sentinel__:hello"]; n != 0 {
			t.Errorf("a denied SUBSCRIBE subscribed %d", n)
		}
		ps := u.PSubscribe(ctx, "__sentinel__:*")
		defer ps.Close()
		if v, err := ps.Receive(ctx); err != nil {
			t.Errorf("PSUBSCRIBE of the rule itself: %v %v", v, err)
		}
		// Losing the channel closes the subscriber, as in Redis.
		if err := admin.ACLSetUser(ctx, "hello", "resetchannels", "&__sentinel__:hello").Err(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for admin.PubSubNumPat(ctx).Val() != 0 {
			if time.Now().After(deadline) {
				t.Fatal("a subscriber that lost its pattern is still subscribed")
			}
			time.Sleep(time.Millisecond)
		}
		f := client(t, addr, func(o *redis.Options) { o.Username, o.Password, o.Protocol = "fresh", "pw", proto })
		wantErr(t, f.Publish(ctx, "__sentinel__:hello", "hi").Err(), noperm)
		entries, err := admin.ACLLog(ctx, 1).Result()
		if err != nil || len(entries) != 1 {
			t.Fatalf("ACL LOG: %v %v", entries, err)
		}
		if e := entries[0]; e.Reason != "channel" || e.Object != "__sentinel__:hello" || e.Username != "fresh" || e.Context != "toplevel" {
			t.Errorf("ACL LOG entry %+v", e)
		}
		if got := admin.Do(ctx, "ACL", "DRYRUN", "hello", "PUBLISH", "x", "m").Val(); got != "User hello has no permissions to access the 'x' channel" {
			t.Errorf("ACL DRYRUN: %v", got)
		}
		if got := admin.Do(ctx, "ACL", "DRYRUN", "hello", "PUBLISH", "__sentinel__:hello", "m").Val(); got != "OK" {
			t.Errorf("ACL DRYRUN allowed: %v", got)
		}
		// Inside MULTI the denial aborts the transaction.
		tx := u.TxPipeline()
		tx.Publish(ctx, "other", "x")
		if _, err := tx.Exec(ctx); err == nil || !strings.Contains(err.Error(), "EXECABORT") && !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("MULTI PUBLISH denied: %v", err)
		}
	})
}

// TestPubSubRedisCLI: redis-cli SUBSCRIBE prints a message PUBLISH sends.
func TestPubSubRedisCLI(t *testing.T) {
	cli := prereq.Program(t, "redis-cli")
	_, addr := start(t, server.Config{})
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "-h", host, "-p", port, "SUBSCRIBE", "__sentinel__:hello")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	var got []string
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("redis-cli ended: %v; printed %q", lines.Err(), got)
		}
		got = append(got, lines.Text())
		return lines.Text()
	}
	// "subscribe", the channel, 1; whatever the formatting, the count last.
	for next() != "1" {
	}
	c := client(t, addr)
	if n := c.Publish(context.Background(), "__sentinel__:hello", "127.0.0.1,26379,runid,0").Val(); n != 1 {
		t.Errorf("PUBLISH = %d", n)
	}
	for next() != "127.0.0.1,26379,runid,0" {
	}
	if !slices.Contains(got, "message") || !slices.Contains(got, "subscribe") {
		t.Errorf("redis-cli printed %q", got)
	}
}

// TestPubSubClientKill: CLIENT LIST TYPE pubsub lists the subscribers and
// CLIENT KILL TYPE pubsub closes them, and only them.
func TestPubSubClientKill(t *testing.T) {
	_, addr := start(t, server.Config{})
	ctx := context.Background()
	admin, other := client(t, addr), client(t, addr)
	other.Ping(ctx)
	s1 := client(t, addr).Subscribe(ctx, "a")
	defer s1.Close()
	s2 := client(t, addr).PSubscribe(ctx, "b*")
	defer s2.Close()
	for _, ps := range []*redis.PubSub{s1, s2} {
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}
	list := admin.ClientList(ctx).Val()
	if n := strings.Count(list, "flags=P "); n != 2 {
		t.Errorf("CLIENT LIST has %d subscribers:\n%s", n, list)
	}
	typed := admin.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").Val().(string)
	if n := strings.Count(typed, "\n"); n != 2 || strings.Contains(typed, "flags=N") {
		t.Errorf("CLIENT LIST TYPE pubsub:\n%s", typed)
	}
	if n, err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n != 2 {
		t.Errorf("CLIENT KILL TYPE pubsub = %d %v, want 2", n, err)
	}
	if err := other.Ping(ctx).Err(); err != nil {
		t.Errorf("a normal client was killed: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for admin.PubSubNumPat(ctx).Val() != 0 || admin.PubSubNumSub(ctx, "a").Val()["a"] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("killed subscribers still registered")
		}
		time.Sleep(time.Millisecond)
	}
}
